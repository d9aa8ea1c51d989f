// The run's state machine (docs/protocol.md#runs): its statuses, every move between them, what causes each move and
// who may cause it. The thread's run lifecycle moves runs only by these causes; the runs table refuses anything else.
// A run that waits for a person (an approval, a client tool's result) is `requires_action`: entered from `running`
// (park) and left for `running` (resume) once every call of its step is decided or answered, or for an end.

export const RUN_STATUSES = [
  "queued",
  "running",
  "requires_action",
  "succeeded",
  "failed",
  "aborted",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Why a run ended `aborted`, as its `reason` says on the wire. */
export const ABORT_REASONS = ["cancelled", "interrupted", "handoff"] as const;
export type AbortReason = (typeof ABORT_REASONS)[number];

interface Move {
  from: readonly RunStatus[];
  to: RunStatus;
  /** Who may cause it. */
  by: string;
  /** For a move to `aborted`: the reason it records. */
  reason?: AbortReason;
}

/** Every move a run can make, by its cause. */
export const RUN_MOVES = {
  /** Its turn came: no run is live, the tenant's quota granted a slot and its message is placed. */
  start: { from: ["queued"], to: "running", by: "the thread" },
  /**
   * The model called a tool that needs a decision or a client's answer: the run waits holding no isolate and no slot
   * of the tenant's run quota.
   */
  park: { from: ["running"], to: "requires_action", by: "the model" },
  /** Every call it waited for was decided or answered (or timed out): the model goes on. */
  resume: { from: ["requires_action"], to: "running", by: "a decision, a client's answer or the clock" },
  /** The model's reply is complete. */
  succeed: { from: ["running"], to: "succeeded", by: "the model" },
  /**
   * It cannot go on: the model or a tool failed, the run passed its time limit, the quota refused a queued run's slot
   * or its message can no longer be placed. The run records why.
   */
  fail: { from: ["queued", "running", "requires_action"], to: "failed", by: "the platform" },
  /** The thread's visitor or user, or the tenant, cancelled it (its pending approvals are cancelled with it). */
  cancel: {
    from: ["queued", "running", "requires_action"],
    to: "aborted",
    by: "the caller",
    reason: "cancelled",
  },
  /** A later turn under `interrupt` or `rollback` took its place, or the object restarted while it ran. */
  interrupt: {
    from: ["queued", "running", "requires_action"],
    to: "aborted",
    by: "a later turn or a restart",
    reason: "interrupted",
  },
  /** The tenant started a handoff: a person answers now, and a queued turn's message is kept unanswered. */
  handoff: {
    from: ["queued", "running", "requires_action"],
    to: "aborted",
    by: "the tenant",
    reason: "handoff",
  },
} as const satisfies Record<string, Move>;

export type RunCause = keyof typeof RUN_MOVES;
/** The causes that end a run `aborted`. */
export type AbortCause = {
  [C in RunCause]: (typeof RUN_MOVES)[C]["to"] extends "aborted" ? C : never;
}[RunCause];

const MOVES: readonly Move[] = Object.values(RUN_MOVES);

/** Whether any cause moves a run from `from` to `to`. */
export function canBecome(from: RunStatus, to: RunStatus): boolean {
  return MOVES.some((move) => move.to === to && move.from.includes(from));
}

/** An ended run moves no more. */
export function isTerminalRunStatus(status: RunStatus): boolean {
  return !MOVES.some((move) => move.from.includes(status));
}

/** The cause of an abort whose signal carried `reason` (`AbortController.abort(reason)`); a bare abort is a cancel. */
export function abortCauseOf(reason: unknown): AbortCause {
  if (reason === "interrupted") return "interrupt";
  if (reason === "handoff") return "handoff";
  return "cancel";
}
