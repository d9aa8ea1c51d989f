// The run's state machine (docs/protocol.md#runs): which moves exist, which statuses are final, and how an aborted
// signal's reason names its cause. The runs table refuses any move this table does not have.
import { describe, expect, it } from "vitest";
import {
  abortCauseOf,
  canBecome,
  isTerminalRunStatus,
  RUN_MOVES,
  RUN_STATUSES,
  type RunStatus,
} from "../../src/shared/run-states";

describe("the run state machine", () => {
  it("allows exactly the moves of its causes", () => {
    const allowed = new Set<string>();
    for (const move of Object.values(RUN_MOVES))
      for (const from of move.from) allowed.add(`${from}→${move.to}`);
    expect([...allowed].sort()).toEqual(
      [
        "queued→running",
        "queued→failed",
        "queued→aborted",
        "running→requires_action",
        "running→succeeded",
        "running→failed",
        "running→aborted",
        "requires_action→running",
        "requires_action→failed",
        "requires_action→aborted",
      ].sort(),
    );
    for (const from of RUN_STATUSES) {
      for (const to of RUN_STATUSES) expect(canBecome(from, to)).toBe(allowed.has(`${from}→${to}`));
    }
  });

  it("ends for good in succeeded, failed and aborted", () => {
    const final = RUN_STATUSES.filter((status: RunStatus) => isTerminalRunStatus(status));
    expect(final).toEqual(["succeeded", "failed", "aborted"]);
  });

  it("records the abort reason of each aborting cause, and reads an aborted signal's reason back as its cause", () => {
    expect(RUN_MOVES.cancel).toMatchObject({ to: "aborted", reason: "cancelled" });
    expect(RUN_MOVES.interrupt).toMatchObject({ to: "aborted", reason: "interrupted" });
    expect(RUN_MOVES.handoff).toMatchObject({ to: "aborted", reason: "handoff" });
    expect(abortCauseOf("interrupted")).toBe("interrupt");
    expect(abortCauseOf("handoff")).toBe("handoff");
    expect(abortCauseOf("cancelled")).toBe("cancel");
    expect(abortCauseOf(undefined)).toBe("cancel");
  });
});
