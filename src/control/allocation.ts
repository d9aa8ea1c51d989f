// Deterministic weighted assignment of a thread to one of a release's versions (docs/api.md).
import { canonicalJson, sha256Hex } from "./canonical-json";
import type { Environment } from "./deployment-store";

/** Weights are parts of this many; a release's weights sum to exactly this. */
export const WEIGHT_TOTAL = 10_000;

export interface BucketInput {
  tenantId: string;
  environment: Environment;
  agentId: string;
  releaseId: string;
  threadId: string;
}

/** First 48 bits of SHA-256(canonical [tenantId, environment, agentId, releaseId, threadId]) mod 10,000. */
export async function bucketFor(input: BucketInput): Promise<number> {
  const hex = await sha256Hex(
    canonicalJson([input.tenantId, input.environment, input.agentId, input.releaseId, input.threadId]),
  );
  // 48 bits fit a double exactly, so the modulo is exact.
  return Number.parseInt(hex.slice(0, 12), 16) % WEIGHT_TOTAL;
}

/** Walks cumulative weights in allocation order; the first allocation whose running total exceeds the bucket wins. */
export function pickAllocation<T extends { weight: number }>(allocations: readonly T[], bucket: number): T {
  let total = 0;
  for (const allocation of allocations) {
    total += allocation.weight;
    if (bucket < total) return allocation;
  }
  throw new Error(`Allocations cover ${total} of ${WEIGHT_TOTAL} buckets; bucket ${bucket} has no owner.`);
}

export async function selectAllocation<T extends { weight: number }>(
  input: BucketInput,
  allocations: readonly T[],
): Promise<T> {
  return pickAllocation(allocations, await bucketFor(input));
}
