// An erased thread's files (docs/privacy.md#attachments): once the thread object holds nothing, the tenant's ledger
// drops the thread's references and deletes every object no other live thread of the tenant uses. Idempotent, so an
// erasure cut off here is finished by repeating it.

import { tenantQuota } from "../auth/tenant-quota";
import { AppError } from "../errors";

/** The SHA-256s of the objects this release deleted (for the receipt); a 502 when the ledger or R2 failed. */
export async function releaseErasedThreadAttachments(
  env: Env,
  tenantId: string,
  threadId: string,
): Promise<string[]> {
  try {
    return await tenantQuota(env, tenantId).releaseThreadAttachments(threadId);
  } catch (cause) {
    throw new AppError(
      "upstream_unavailable",
      "The conversation was erased, but its attachments could not be deleted yet; repeat the request to finish.",
      { cause },
    );
  }
}
