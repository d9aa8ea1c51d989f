// `run.succeeded` and `run.failed` for the tenant's backend (docs/webhooks.md), recorded in the transaction that seals the run.
import { eventSubscriptionsOf } from "../../events/subscriptions";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { Run } from "../../storage/thread/run-store";
import { recordThreadEvent } from "../../storage/thread/thread-events";
import type { UsageTotals } from "../../storage/thread/usage-store";

/**
 * Records the event of a run that just ended, with the run's usage totals; an aborted run (cancelled, interrupted,
 * handed off) has none, and neither has a run whose event no endpoint of the tenant subscribes to.
 */
export function recordRunEvent(
  storage: DurableObjectStorage,
  binding: ThreadBinding,
  run: Run,
  usage: UsageTotals,
  now: number,
): void {
  if (run.status !== "succeeded" && run.status !== "failed") return;
  const type = run.status === "succeeded" ? "run.succeeded" : "run.failed";
  // No endpoint subscribes to it, and the tenant's events object would have told this thread if one had been created:
  // the event would be handed over only to be dropped, and nothing here reads it again (docs/decisions.md, "Events
  // handed over only when someone listens").
  if (!eventSubscriptionsOf(storage).wanted(type, now)) return;
  recordThreadEvent(
    storage,
    {
      type,
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
