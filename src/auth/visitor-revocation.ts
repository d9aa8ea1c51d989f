// The key a revoked visitor is kept under, shared by the erasure that revokes it and the socket watch that checks it.
import { hmacSha256 } from "../shared/bytes";
import { toHex } from "../shared/hex";

/** An HMAC of tenant and visitor id: the revocation row names no visitor id in the clear. */
export async function visitorHash(env: Env, tenantId: string, visitorId: string): Promise<string> {
  return toHex(await hmacSha256(env.DO_NAME_KEY, ["revoked-visitor", tenantId, visitorId].join("\n")));
}
