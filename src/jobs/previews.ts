// The scheduled end of preview threads (docs/api.md): a day after it was opened, a preview thread is erased everywhere —
// its registry row becomes a tombstone (its tokens are refused from then on), its projected rows and its thread
// object's storage go — and then its preview row. No `session.erased` event: its tenant's backend never heard of it.

import { unwrap } from "../errors";
import { releaseErasedThreadAttachments } from "../services/erased-attachments";
import { eraseThreadsRows, threadAddresses } from "../storage/d1/erasures";
import { deletePreviews, expiredPreviews, type PreviewRecord } from "../storage/d1/thread-previews";
import { rowAddress, threadStubFor } from "../thread/contract";

/** Previews per run: the cron fires every few minutes, so a backlog drains over several runs. */
const PREVIEWS_PER_RUN = 100;

/** Erases the previews expired at `now` (epoch ms, passed explicitly so tests control the clock); returns how many. */
export async function expirePreviews(env: Env, now: number): Promise<number> {
  const due = await expiredPreviews(env.DB, new Date(now).toISOString(), PREVIEWS_PER_RUN);
  const byTenant = new Map<string, PreviewRecord[]>();
  for (const preview of due)
    byTenant.set(preview.tenantId, [...(byTenant.get(preview.tenantId) ?? []), preview]);
  let erased = 0;
  for (const [tenantId, previews] of byTenant) {
    const ids = previews.map((p) => p.threadId);
    const threads = await threadAddresses(env.DB, tenantId, ids);
    await eraseThreadsRows(env, tenantId, ids, new Date(now).toISOString());
    const done = await Promise.allSettled(
      threads.map(async (thread) => {
        const row = { tenantId, ...thread };
        unwrap(await (await threadStubFor(env, row)).eraseThread(rowAddress(row)));
        // Files uploaded in the playground go too (docs/privacy.md#attachments); a failure keeps the preview row.
        await releaseErasedThreadAttachments(env, tenantId, thread.id);
        return thread.id;
      }),
    );
    // A thread object that could not be reached keeps its preview row: the next run erases it again.
    const gone = new Set(done.flatMap((d) => (d.status === "fulfilled" ? [d.value] : [])));
    const known = new Set(threads.map((t) => t.id));
    const forgotten = ids.filter((id) => gone.has(id) || !known.has(id));
    await deletePreviews(env.DB, tenantId, forgotten);
    erased += forgotten.length;
  }
  if (erased > 0) console.log(JSON.stringify({ level: "info", message: "expired previews erased", erased }));
  return erased;
}
