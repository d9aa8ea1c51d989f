// `run.succeeded` and `run.failed` for the tenant's backend (docs/webhooks.md), recorded in the transaction that seals the run.
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { Run } from "../../storage/thread/run-store";
import { recordThreadEvent } from "../../storage/thread/thread-events";
import type { UsageTotals } from "../../storage/thread/usage-store";

/**
 * Records the event of a run that just ended, with the run's usage totals; an aborted run (cancelled, interrupted,
 * handed off) has none.
 */
export function recordRunEvent(
  storage: DurableObjectStorage,
  binding: ThreadBinding,
  run: Run,
  usage: UsageTotals,
  now: number,
): void {
  if (run.status !== "succeeded" && run.status !== "failed") return;
  recordThreadEvent(
    storage,
    {
      type: run.status === "succeeded" ? "run.succeeded" : "run.failed",
      data: {
        threadId: binding.threadId,
        agentId: binding.agentId,
        version: binding.version,
        runId: run.id,
        status: run.status,
        usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, turns: usage.turns },
        entryId: run.assistantEntryId,
        userEntryId: run.userEntryId,
        ...(run.error !== null
          ? { error: { code: run.error.code, ...(run.error.reason ? { reason: run.error.reason } : {}) } }
          : {}),
      },
    },
    now,
  );
}
