// A new thread's owner, proven by the launch that minted its id: the thread object records it from its first request's
// verified claims instead of being told during the launch (docs/decisions.md, "Launch latency").
import { constantTimeEqual, hmacSha256 } from "../shared/bytes";
import { toHex } from "../shared/hex";

/** Who a fresh launch minted a thread for: the address the object is named by, plus the subject. */
export interface OwnedThread {
  tenantId: string;
  environment: string;
  agentId: string;
  threadId: string;
  sub: string;
  subjectKind: "visitor" | "user";
}

/**
 * HMAC-SHA256 under `DO_NAME_KEY` (a secret of the Worker and its objects, never of the token signer alone) over the
 * thread and its subject, labelled so it matches no other use of that key, as 128 bits of hex. The parts are JSON: no
 * two different tuples encode alike, whatever a subject contains. A token signed with a leaked launch key still cannot
 * carry a proof for another subject or thread.
 */
export async function ownerProof(secret: string, owned: OwnedThread): Promise<string> {
  const parts = [
    "thread-owner v1",
    owned.tenantId,
    owned.environment,
    owned.agentId,
    owned.threadId,
    owned.sub,
    owned.subjectKind,
  ];
  return toHex((await hmacSha256(secret, JSON.stringify(parts))).subarray(0, 16));
}

/** Whether `proof` is the proof of exactly these claims. */
export async function ownerProofHolds(secret: string, owned: OwnedThread, proof: string): Promise<boolean> {
  return constantTimeEqual(await ownerProof(secret, owned), proof);
}
