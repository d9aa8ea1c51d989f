// What a tenant's quota object answers and how it is reached: the launch and run decisions, the lease timing, the stub.
// The object itself is src/objects/tenant-quota.ts.

/** A launch's answer: taken, or refused because the tenant is disabled or a daily limit (`kind`) is used up. */
export type LaunchDecision =
  | { ok: true }
  | { ok: false; disabled: true }
  | { ok: false; disabled?: undefined; kind: string; used: number; limit: number; retryAfterSeconds: number };

/** Today's counter of all public launches; a refusal on it names the public share. */
export const PUBLIC_LAUNCHES = "launches:public";

/** A run's slot: granted with a lease id, or refused with the taxonomy code to answer. */
export type RunGrant =
  /**
   * `unlimited`: the tenant is active and has no run quota, so a thread may skip asking for a while; such a grant
   * holds no lease (`leaseId` null: nothing to renew or give back, only tokens to count).
   */
  | { ok: true; leaseId: string | null; leaseMs: number; unlimited: boolean }
  | { ok: false; code: "quota_exceeded" | "forbidden"; message: string; retryAfter?: number };

/** How long a run's lease lasts unless renewed; its holder renews it well before (see `RUN_LEASE_RENEW_MS`). */
export const RUN_LEASE_MS = 180_000;
/**
 * The settings copy is refreshed at once by every operator change (`refreshSettings`); this re-read is only the
 * backstop for a change that reached D1 some other way, and it happens in the background.
 */
export const SETTINGS_REVALIDATE_MS = 300_000;

/** Bytes of attachment objects a tenant may keep unless the operator set its `storageBytes` (docs/operations.md). */
export const DEFAULT_STORAGE_BYTES = 1024 * 1024 * 1024;

/** A claim on the tenant's attachment storage (docs/api.md, "Attachments"). */
export type AttachmentClaim =
  /** `isNew`: the tenant had no object with these bytes; the upload must store them. */
  | { ok: true; isNew: boolean }
  | { ok: false; reason: "storage_quota"; usedBytes: number; limitBytes: number };

export interface QuotaClock {
  now(): number;
}

export function tenantQuota(env: Env, tenantId: string) {
  return env.QUOTA.get(env.QUOTA.idFromName(tenantId));
}
