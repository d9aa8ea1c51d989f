// The one structured log line per turn (docs/operations.md), written when its run ends: ids, model, timings, tokens, outcome.
import type { ErrorCode, ErrorReason } from "../../shared/errors";
import type { RunStatus } from "../../shared/protocol";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { Run } from "../../storage/thread/run-store";
import type { UsageTotals } from "../../storage/thread/usage-store";

/** Ids, names and numbers only: never a token, a key, a secret or any text of the conversation. */
export interface TurnLogLine {
  level: "info";
  message: "turn";
  tenantId: string;
  threadId: string;
  runId: string;
  /** The Worker request that started the turn; null for a run sealed after an eviction. */
  requestId: string | null;
  provider: string;
  model: string;
  /** From the turn's acceptance to its first streamed delta; null when none streamed. */
  firstDeltaMs: number | null;
  /** From the turn's acceptance to the end of its run. */
  durationMs: number | null;
  inputTokens: number;
  outputTokens: number;
  status: RunStatus;
  errorCode: ErrorCode | null;
  /** A provider failure's reason (`auth`, `context_length`, …), so an operator can tell a bad key from an outage. */
  errorReason: ErrorReason | null;
}

export interface TurnFacts {
  binding: ThreadBinding;
  run: Run;
  /** Read only when the line is written. */
  usage: () => UsageTotals;
  requestId: string | null;
  firstDeltaAt: number | null;
}

export function turnLogLine({ binding, run, usage, requestId, firstDeltaAt }: TurnFacts): TurnLogLine {
  const since = (at: number | null) => (at === null ? null : Math.max(0, at - run.createdAt));
  const tokens = usage();
  return {
    level: "info",
    message: "turn",
    tenantId: binding.tenantId,
    threadId: binding.threadId,
    runId: run.id,
    requestId,
    provider: binding.artifact.model.provider,
    model: binding.artifact.model.model,
    firstDeltaMs: since(firstDeltaAt),
    durationMs: since(run.endedAt),
    inputTokens: tokens.inputTokens,
    outputTokens: tokens.outputTokens,
    status: run.status,
    errorCode: run.error?.code ?? null,
    errorReason: run.error?.reason ?? null,
  };
}

/** Never throws: a log line must not keep a sealed run from reaching its clients. */
export function logTurn(facts: TurnFacts): void {
  try {
    console.log(JSON.stringify(turnLogLine(facts)));
  } catch (error) {
    console.error(JSON.stringify({ level: "error", message: "turn log failed", error: String(error) }));
  }
}
