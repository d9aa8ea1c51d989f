// Exact per-tenant quotas and the tenant's on/off switch, in one small Durable Object per tenant: launches and tokens
// per UTC day, and runs in progress at once (leases that expire, so a dead holder frees its slot by itself); and the
// ledger of the tenant's attachment objects, by SHA-256, with the threads referencing each (docs/api.md); and the
// rounds that close or re-check the tenant's open sockets, worked through from its alarm (docs/security.md).
import { DurableObject } from "cloudflare:workers";
import { launchBudget } from "../auth/launch-budget";
import { activitySince } from "../auth/socket-activity";
import {
  type AttachmentClaim,
  DEFAULT_STORAGE_BYTES,
  type LaunchDecision,
  PUBLIC_LAUNCHES,
  type QuotaClock,
  RUN_LEASE_MS,
  type RunGrant,
  SETTINGS_REVALIDATE_MS,
} from "../auth/tenant-quota";
import { DISCONNECT_BATCH, type SocketRoundRequest, workSocketRounds } from "../services/tenant-disconnect";
import type { TenantQuotas, TenantStatus } from "../shared/api";
import { deleteAttachmentObjects } from "../storage/attachments";
import { getTenantSettings } from "../storage/d1/tenants";
import {
  attachmentObjectExists,
  attachmentStorageUsed,
  createAttachmentLedger,
  deleteAttachmentObjectRows,
  dropThreadRefs,
  insertAttachmentRef,
} from "../storage/quota/attachment-ledger";
import {
  countQuotaUse,
  createQuotaCounters,
  deleteRunLease,
  expireRunLeases,
  insertRunLease,
  leasedThreads,
  quotaUsed,
  readTenantSettings,
  renewRunLease,
  type StoredTenantSettings,
  uncountQuotaUse,
  writeTenantSettings,
} from "../storage/quota/quota-counters";
import { createSocketRounds, storeSocketRound } from "../storage/quota/socket-rounds";

/** A concurrency refusal's Retry-After: runs end at any moment, so a client may try again soon. */
const CONCURRENCY_RETRY_SECONDS = 5;
/** A socket round's step that threw (D1 unreadable) is tried again this much later. */
const SOCKET_ROUND_RETRY_MS = 5_000;

const DEFAULT_SETTINGS: Omit<StoredTenantSettings, "loadedAt"> = {
  status: "active",
  quotas: {
    launchesPerDay: null,
    tokensPerDay: null,
    concurrentThreads: null,
    privateLaunchReservePercent: null,
    agentPublicLaunchSharePercent: null,
    storageBytes: null,
  },
};

function utcDay(now: number): { day: string; secondsLeft: number } {
  const date = new Date(now);
  const next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return { day: date.toISOString().slice(0, 10), secondsLeft: Math.ceil((next - now) / 1000) };
}

export class TenantQuota extends DurableObject<Env> {
  readonly #clock: QuotaClock;
  /** Reads of the tenant started, and the newest one stored: an older read finishing late never overwrites. */
  #readsStarted = 0;
  #readStored = 0;
  /** Deletions of attachment bytes under way, by SHA-256 (a claim of the same bytes waits for its deletion). */
  readonly #deletions = new Map<string, Promise<void>>();
  /** Threads a socket round asks per step. */
  readonly #socketBatch: () => number;

  /** The runtime constructs with `(ctx, env)`; only a test-only subclass passes another clock or batch size. */
  constructor(
    ctx: DurableObjectState,
    env: Env,
    clock: QuotaClock = { now: () => Date.now() },
    socketBatch: () => number = () => DISCONNECT_BATCH,
  ) {
    super(ctx, env);
    this.#clock = clock;
    this.#socketBatch = socketBatch;
    createQuotaCounters(ctx.storage.sql);
    createAttachmentLedger(ctx.storage.sql);
    createSocketRounds(ctx.storage.sql);
  }

  /**
   * Takes one launch of today if the tenant is active and its daily limit allows (its own `launchesPerDay`, else
   * `defaultLimit`) and, for a public launch (`agentId` given), also one of the public launches the private reserve
   * leaves (kind `launches:public`) and one of that agent's public share (kind `launches:agent:<id>`): all or none
   * (`launchBudget`, docs/operations.md "Launch shares"). A refusal consumes nothing.
   */
  async consumeLaunch(defaultLimit: number, agentId?: string): Promise<LaunchDecision> {
    const settings = await this.#settings();
    if (settings.status !== "active") return { ok: false, disabled: true };
    const budget = launchBudget(settings.quotas, defaultLimit);
    const charges = [{ kind: "launches", limit: budget.launchesPerDay }];
    if (agentId !== undefined) {
      charges.push(
        { kind: PUBLIC_LAUNCHES, limit: budget.publicLaunchesPerDay },
        { kind: `launches:agent:${agentId}`, limit: budget.agentPublicLaunchesPerDay },
      );
    }
    const { day, secondsLeft } = utcDay(this.#clock.now());
    const sql = this.ctx.storage.sql;
    // No await between the reads and the writes: the object runs this as one step, so no launch slips between them.
    for (const { kind, limit: kindLimit } of charges) {
      const used = quotaUsed(sql, kind, day);
      if (used >= kindLimit)
        return { ok: false, kind, used, limit: kindLimit, retryAfterSeconds: secondsLeft };
    }
    for (const { kind } of charges) countQuotaUse(sql, kind, day);
    return { ok: true };
  }

  /** Gives back a launch `consumeLaunch` took (same `agentId`) when the launch could store nothing after all. */
  async refundLaunch(agentId?: string): Promise<void> {
    const { day } = utcDay(this.#clock.now());
    const sql = this.ctx.storage.sql;
    uncountQuotaUse(sql, "launches", day);
    if (agentId !== undefined) {
      uncountQuotaUse(sql, PUBLIC_LAUNCHES, day);
      uncountQuotaUse(sql, `launches:agent:${agentId}`, day);
    }
  }

  /** Units of `kind` (`launches`, `tokens`) used today. */
  async usage(kind: string): Promise<number> {
    const { day } = utcDay(this.#clock.now());
    return quotaUsed(this.ctx.storage.sql, kind, day);
  }

  /** Re-reads the tenant's status and quotas from D1 now: the operator API calls it after every change. */
  async refreshSettings(): Promise<{ status: TenantStatus; quotas: TenantQuotas }> {
    const settings = await this.#load();
    return { status: settings.status, quotas: settings.quotas };
  }

  /**
   * A slot for a run of `threadId`: refused while the tenant is disabled, once today's tokens are used up, or when
   * `concurrentThreads` other threads hold a live lease. A thread that already holds one gets another (its runs
   * are one at a time anyway). A tenant without run quotas gets a grant without a lease. `tokens`: the thread's
   * earlier runs' tokens it had yet to count (src/auth/run-quota.ts), counted first, whatever the answer; a refusal
   * stores nothing else.
   */
  async startRun(threadId: string, tokens = 0): Promise<RunGrant> {
    const now = this.#clock.now();
    const sql = this.ctx.storage.sql;
    const { day, secondsLeft } = utcDay(now);
    if (Number.isSafeInteger(tokens) && tokens > 0) countQuotaUse(sql, "tokens", day, tokens);
    const settings = await this.#settings();
    if (settings.status !== "active") {
      return { ok: false, code: "forbidden", message: "This account is disabled." };
    }
    const { tokensPerDay, concurrentThreads } = settings.quotas;
    if (tokensPerDay !== null && quotaUsed(sql, "tokens", day) >= tokensPerDay) {
      return {
        ok: false,
        code: "quota_exceeded",
        message: "The daily token quota for this account is used up.",
        retryAfter: secondsLeft,
      };
    }
    if (tokensPerDay === null && concurrentThreads === null) {
      return { ok: true, leaseId: null, leaseMs: RUN_LEASE_MS, unlimited: true };
    }
    expireRunLeases(sql, now);
    if (concurrentThreads !== null) {
      const { threads, holdsOne } = leasedThreads(sql, threadId);
      if (!holdsOne && threads >= concurrentThreads) {
        return {
          ok: false,
          code: "quota_exceeded",
          message: "Too many conversations of this account are answering at once; try again shortly.",
          retryAfter: CONCURRENCY_RETRY_SECONDS,
        };
      }
    }
    const leaseId = crypto.randomUUID();
    insertRunLease(sql, { id: leaseId, threadId, expiresAt: now + RUN_LEASE_MS });
    return { ok: true, leaseId, leaseMs: RUN_LEASE_MS, unlimited: false };
  }

  /** Keeps a run's lease alive; false when it had already expired (the slot may have gone to another run). */
  async renewRun(leaseId: string): Promise<boolean> {
    return renewRunLease(this.ctx.storage.sql, leaseId, this.#clock.now() + RUN_LEASE_MS);
  }

  /** A run ended (however it ended): its slot, if it took one, is freed and its tokens count towards today's. */
  async endRun(leaseId: string | null, tokens: number): Promise<void> {
    const sql = this.ctx.storage.sql;
    if (leaseId !== null) deleteRunLease(sql, leaseId);
    if (Number.isSafeInteger(tokens) && tokens > 0) {
      countQuotaUse(sql, "tokens", utcDay(this.#clock.now()).day, tokens);
    }
  }

  /**
   * Records that `threadId` keeps the object with these bytes. An object the tenant already has costs nothing more;
   * a new one must fit the storage quota (`storageLimitBytes`, else the tenant's `storageBytes`, else 1 GiB). A
   * refusal stores nothing. Waits for a deletion of the same bytes under way, so the caller never finds the old
   * object about to vanish.
   */
  async claimAttachment(input: {
    threadId: string;
    sha256: string;
    size: number;
    storageLimitBytes?: number;
  }): Promise<AttachmentClaim> {
    const deleting = this.#deletions.get(input.sha256);
    if (deleting !== undefined) await deleting.catch(() => undefined);
    const settings = await this.#settings();
    const sql = this.ctx.storage.sql;
    const isNew = !attachmentObjectExists(sql, input.sha256);
    if (isNew) {
      const limitBytes = input.storageLimitBytes ?? settings.quotas.storageBytes ?? DEFAULT_STORAGE_BYTES;
      const usedBytes = attachmentStorageUsed(sql).bytes;
      if (usedBytes + input.size > limitBytes) {
        return { ok: false, reason: "storage_quota", usedBytes, limitBytes };
      }
    }
    insertAttachmentRef(sql, { ...input, at: this.#clock.now() });
    return { ok: true, isNew };
  }

  /**
   * Drops every reference of `threadId` (or, with `only`, its references to those SHA-256s: what retention and the
   * zero-retention purge took from a thread that lives on, docs/privacy.md#attachments) and deletes (bytes first,
   * then the ledger rows) each object no other thread of the tenant references; returns their SHA-256s. Idempotent:
   * a second call finds nothing, and an earlier call that stopped between the two deletes is finished by the next one.
   */
  async releaseThreadAttachments(threadId: string, only?: readonly string[]): Promise<string[]> {
    const sql = this.ctx.storage.sql;
    const orphans = dropThreadRefs(sql, threadId, only);
    if (orphans.length === 0) return [];
    const deleted = deleteAttachmentObjects(this.env.ATTACHMENTS, this.#tenantId(), orphans);
    for (const sha256 of orphans) this.#deletions.set(sha256, deleted);
    try {
      await deleted;
    } finally {
      for (const sha256 of orphans)
        if (this.#deletions.get(sha256) === deleted) this.#deletions.delete(sha256);
    }
    // A thread that claimed the same bytes meanwhile keeps the row (its upload stores the bytes again).
    deleteAttachmentObjectRows(sql, orphans);
    return orphans;
  }

  /** The tenant's attachment storage: bytes and count of its distinct objects. */
  async attachmentStorage(): Promise<{ bytes: number; objects: number }> {
    return attachmentStorageUsed(this.ctx.storage.sql);
  }

  /**
   * Records a round over the tenant's live threads (src/services/tenant-disconnect.ts): stored before this answers,
   * merged with a pending round of the same scope, and started at once by waking the alarm. A disconnect stops by
   * itself once the tenant is enabled again (each step reads its status first).
   */
  async queueSocketRound(request: SocketRoundRequest): Promise<void> {
    const now = Date.now();
    const agentId = request.kind === "recheck" ? (request.agentId ?? null) : null;
    storeSocketRound(this.ctx.storage.sql, { kind: request.kind, agentId, since: activitySince(now), now });
    const due = await this.ctx.storage.getAlarm();
    if (due === null || due > now) await this.ctx.storage.setAlarm(now);
  }

  /** Works through the socket rounds a step at a time; an eviction resumes from the stored cursor. */
  override async alarm(): Promise<void> {
    let next: number | null;
    try {
      next = await workSocketRounds(this.env, this.#tenantId(), this.ctx.storage.sql, this.#socketBatch());
    } catch (error) {
      console.error(
        JSON.stringify({ level: "error", message: "socket round step failed", error: String(error) }),
      );
      next = Date.now() + SOCKET_ROUND_RETRY_MS;
    }
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }

  #tenantId(): string {
    const tenantId = this.ctx.id.name;
    if (tenantId === undefined) throw new Error("TenantQuota must be reached by tenant name.");
    return tenantId;
  }

  /** The stored copy; read from D1 the first time, re-read in the background once it is old. */
  async #settings(): Promise<StoredTenantSettings> {
    const stored = readTenantSettings(this.ctx.storage.sql);
    if (stored === null) return this.#load();
    if (this.#clock.now() - stored.loadedAt > SETTINGS_REVALIDATE_MS) {
      this.ctx.waitUntil(this.#load().catch(() => undefined));
    }
    return stored;
  }

  /**
   * Reads the tenant from D1, started now (never joined to a read already under way, which may predate the change
   * a caller just made), and stores it unless a read started later was stored first. Returns the stored copy.
   */
  async #load(): Promise<StoredTenantSettings> {
    // Named by the tenant id (`tenantQuota` below), so the name is the tenant.
    const tenantId = this.ctx.id.name;
    if (tenantId === undefined) throw new Error("TenantQuota must be reached by tenant name.");
    const started = ++this.#readsStarted;
    const loadedAt = this.#clock.now();
    const read = await getTenantSettings(this.env.DB, tenantId);
    const settings: StoredTenantSettings = { ...(read ?? DEFAULT_SETTINGS), loadedAt };
    if (started > this.#readStored) {
      this.#readStored = started;
      writeTenantSettings(this.ctx.storage.sql, settings);
      return settings;
    }
    return readTenantSettings(this.ctx.storage.sql) ?? settings;
  }
}
