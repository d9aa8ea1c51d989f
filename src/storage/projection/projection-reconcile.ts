// The daily check that D1 still holds what the thread projected: compares the thread's newest entry with D1's
// watermark and queues again whatever D1 lacks; the next drain sends it.
import { z } from "zod";
import { readWatermark } from "../d1/projection-writer";
import { ActionStore } from "../thread/action-store";
import { RunStore } from "../thread/run-store";
import { ToolCallStore } from "../thread/tool-call-store";
import { approvalProjection, enqueueApproval } from "./approval-outbox";
import { enqueueOutbox, projectedEntrySeq, setProjectedEntrySeq } from "./outbox";
import { logProjection, type ProjectionInput, serialized, withinTimeout } from "./projection-lane";

const countSchema = z.object({ n: z.number().nullable() });

function scalar(
  storage: DurableObjectStorage,
  query: string,
  ...bindings: (string | number)[]
): number | null {
  return countSchema.parse(storage.sql.exec(query, ...bindings).one()).n;
}

async function reconcileOnce(input: ProjectionInput): Promise<{ missing: number; failed?: boolean }> {
  const { storage, binding } = input;
  const maxSeq = scalar(storage, "SELECT MAX(seq) AS n FROM entries");
  if (maxSeq === null) return { missing: 0 };
  let watermark: number | null;
  try {
    watermark = await withinTimeout(
      readWatermark(input.db, { tenantId: binding.tenantId, threadId: binding.threadId }),
    );
  } catch (error) {
    logProjection("warn", "reconciliation could not read D1", {
      threadId: binding.threadId,
      error: String(error),
    });
    return { missing: 0, failed: true };
  }
  if (watermark !== null && watermark >= maxSeq) return { missing: 0 };

  const runs = new RunStore(storage, { now: input.now });
  const toolCalls = new ToolCallStore(storage, { now: input.now });
  const now = input.now();
  const queued = (kind: string) =>
    new Set(
      storage.sql
        .exec("SELECT ref_id FROM outbox WHERE kind = ?", kind)
        .toArray()
        .map((r) => String(r.ref_id)),
    );
  return storage.transactionSync(() => {
    // The entries D1 lacks are the ones above its watermark: lowering ours to it sends them again.
    const ours = projectedEntrySeq(storage);
    const lowered = Math.min(ours, watermark ?? 0);
    const missing =
      scalar(storage, "SELECT COUNT(*) AS n FROM entries WHERE seq > ? AND seq <= ?", lowered, ours) ?? 0;
    if (lowered < ours) setProjectedEntrySeq(storage, lowered);
    // D1 never saw this thread (or lost it): the runs (with their usage) and tool calls go again too.
    if (watermark === null) {
      const pendingRuns = queued("run");
      const pendingCalls = queued("tool_call");
      for (const r of storage.sql.exec("SELECT id FROM runs ORDER BY created_at, id").toArray()) {
        const run = runs.get(String(r.id));
        if (run === null) continue;
        if (!pendingRuns.has(run.id)) {
          enqueueOutbox(
            storage,
            { kind: "run", refId: run.id, version: run.revision, payload: { ...run } },
            now,
          );
        }
        for (const call of toolCalls.forRun(run.id)) {
          if (pendingCalls.has(call.id)) continue;
          enqueueOutbox(
            storage,
            { kind: "tool_call", refId: call.id, version: call.revision, payload: { ...call } },
            now,
          );
        }
      }
      // Feedback rows too (cleared ones included, so D1 cannot keep a rating the user withdrew).
      const pendingFeedback = queued("feedback");
      for (const r of storage.sql
        .exec("SELECT entry_id, revision FROM feedback ORDER BY entry_id")
        .toArray()) {
        const entryId = String(r.entry_id);
        if (pendingFeedback.has(entryId)) continue;
        enqueueOutbox(
          storage,
          { kind: "feedback", refId: entryId, version: Number(r.revision), payload: {} },
          now,
        );
      }
      // And the approvals, each as it is now (a waiting row is rewritten with the same view).
      const actions = new ActionStore(storage, { now: input.now });
      for (const r of storage.sql
        .exec("SELECT id FROM run_actions WHERE kind = 'approval' ORDER BY id")
        .toArray()) {
        const action = actions.get(String(r.id));
        if (action !== null)
          enqueueApproval(storage, approvalProjection(binding, action), action.revision, now);
      }
    }
    return { missing };
  });
}

/**
 * Compares the thread's newest entry with D1's watermark and queues the entries D1 lacks (everything, runs and
 * usage included, when D1 has no session row). One indexed D1 read when in sync. Never throws for a D1 failure.
 */
export function reconcileProjection(input: ProjectionInput): Promise<{ missing: number; failed?: boolean }> {
  return serialized(input.storage, () => reconcileOnce(input));
}
