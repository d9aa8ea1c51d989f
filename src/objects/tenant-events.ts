// One Durable Object per tenant that delivers its events to its webhook endpoints: durable, at least once, retried
// with backoff for over a day, in order per (endpoint, thread), with a delivery log (docs/webhooks.md).
//
// Threads (and the control plane, for `session.erased`) hand events over by RPC; a thread deletes its copy only once
// `accept` answered, so an event is always stored somewhere. Fan-out and delivery read this object's own copy of the
// tenant's endpoints, so D1 being down delays nothing (docs/decisions.md, "Event webhooks").
import { DurableObject } from "cloudflare:workers";
import { openSecret } from "../auth/secret-box";
import { localHttpAllowed, publicHosts, toolUrlProblem } from "../control/url-policy";
import { fail, ok, type RpcResult, refusal } from "../errors";
import { attemptDelivery, retryDelays } from "../events/deliver";
import { SUBSCRIPTION_LEASE_MS, SUBSCRIPTION_PUSH_MS, type SubscriptionGrant } from "../events/subscriptions";
import {
  DELIVERY_LOG_RETENTION_MS,
  deliveryView,
  MAX_EVENT_BODY_BYTES,
  MAX_EVENTS_PER_ACCEPT,
  REDELIVERY_LIMIT,
  type TenantEventsDeps,
  webhookSecretAlias,
} from "../events/tenant-events";
import { type DeliveryView, type EventType, eventBodySchema } from "../shared/webhooks-api";
import { listWebhookEndpoints, MAX_WEBHOOK_ENDPOINTS } from "../storage/d1/webhook-endpoints";
import { createEventListeners, keepListener, liveListeners } from "../storage/events/event-listeners";
import {
  createEventQueue,
  type DeliveryRow,
  deliveryLog,
  dueDeliveries,
  type EndpointCopy,
  enqueueEvent,
  eraseThreadEvents,
  nextDueAt,
  pruneEventQueue,
  readEndpoints,
  readQueueMeta,
  recordAttempt,
  redeliver,
  replaceEndpoints,
  writeQueueMeta,
} from "../storage/events/event-queue";
import { type ThreadAddress, threadAddressSchema, threadStub } from "../thread/contract";

/** Deliveries attempted at once, and rounds per alarm (a delivered lane head lets the next one go). */
const DELIVERY_BATCH = 25;
const ROUNDS_PER_ALARM = 20;
/** The endpoint copy is refreshed by every change through the API; this re-read is only the backstop. */
const ENDPOINTS_REVALIDATE_MS = 5 * 60_000;
const PRUNE_EVERY_MS = 3_600_000;
const TENANT_KEY = "tenant_id";
const LOADED_KEY = "endpoints_loaded_at";
const PRUNED_KEY = "pruned_at";
/** Raised each time the set of subscribed event types changes: a thread ignores a set older than a change it heard. */
const EPOCH_KEY = "subscriptions_epoch";
/** Threads told of a change at once. */
const ANNOUNCE_BATCH = 50;

/** The event types at least one endpoint subscribes to, sorted. */
function subscribedTypes(endpoints: readonly EndpointCopy[]): EventType[] {
  return [...new Set(endpoints.flatMap((e) => e.events))].sort();
}

export class TenantEvents extends DurableObject<Env> {
  readonly #deps: TenantEventsDeps;
  /** Opened secrets by endpoint id and ciphertext, so a rotated secret is never used from the cache. */
  readonly #secrets = new Map<string, string>();

  /** The runtime constructs with `(ctx, env)`; only a test-only subclass passes another clock and fetch. */
  constructor(
    ctx: DurableObjectState,
    env: Env,
    deps: TenantEventsDeps = { now: () => Date.now(), fetch: (input, init) => fetch(input, init) },
  ) {
    super(ctx, env);
    this.#deps = deps;
    createEventQueue(ctx.storage.sql);
    createEventListeners(ctx.storage.sql);
  }

  /**
   * RPC: stores the events (already-stored ids change nothing) with a pending delivery per subscribed endpoint. Once
   * this answers `ok`, the events are durable here and the caller may forget them. A thread names itself as
   * `listener`: the answer then carries the subscribed types, and every change of them is pushed to the thread for
   * `SUBSCRIPTION_PUSH_MS` (docs/decisions.md, "Events handed over only when someone listens").
   */
  async accept(
    tenantId: string,
    events: unknown,
    listener?: unknown,
  ): Promise<RpcResult<{ accepted: number; subscriptions?: SubscriptionGrant }>> {
    const bound = this.#bind(tenantId);
    if (!bound.ok) return bound;
    const parsed = eventBodySchema.array().max(MAX_EVENTS_PER_ACCEPT).safeParse(events);
    if (!parsed.success) return refusal(fail("bad_request", "The events are invalid."));
    const address = listener === undefined ? undefined : threadAddressSchema.safeParse(listener);
    if (address !== undefined && (!address.success || address.data.tenantId !== tenantId))
      return refusal(fail("bad_request", "The listener is invalid."));
    this.#revalidateEndpoints(tenantId);
    const now = this.#deps.now();
    let accepted = 0;
    for (const event of parsed.data) {
      // An eval run's event has no thread: its run is its lane (docs/evals.md#runs).
      const threadId =
        typeof event.data.threadId === "string"
          ? event.data.threadId
          : event.type === "eval.completed" && typeof event.data.runId === "string"
            ? `eval:${event.data.runId}`
            : null;
      if (event.tenantId !== tenantId || threadId === null) continue;
      const body = JSON.stringify(event);
      if (new TextEncoder().encode(body).byteLength > MAX_EVENT_BODY_BYTES) {
        console.warn(JSON.stringify({ msg: "event too large, not delivered", eventId: event.id }));
        continue;
      }
      this.ctx.storage.transactionSync(() => {
        if (event.type === "session.erased") eraseThreadEvents(this.ctx.storage.sql, threadId, event.id);
        const created = {
          id: event.id,
          type: event.type,
          threadId,
          createdAt: Date.parse(event.createdAt),
          body,
        };
        if (enqueueEvent(this.ctx.storage.sql, created, now)) accepted += 1;
      });
    }
    // Synchronous with the listing of listeners in `#loadEndpoints`: a change either comes after this grant and is
    // pushed to the thread, or came before it and the grant carries it.
    const subscriptions = address?.data === undefined ? undefined : this.#grant(address.data, now);
    if (accepted > 0) await this.#wake(now);
    return ok({ accepted, ...(subscriptions !== undefined ? { subscriptions } : {}) });
  }

  /**
   * RPC (after every endpoint change through the API): re-reads the tenant's endpoints from D1 and, when the set of
   * subscribed types changed, tells every listening thread before answering, so an event that happens after the API's
   * answer is handed over.
   */
  async endpointsChanged(tenantId: string): Promise<RpcResult<null>> {
    const bound = this.#bind(tenantId);
    if (!bound.ok) return bound;
    await this.#loadEndpoints(tenantId);
    return ok(null);
  }

  /** RPC: one endpoint's delivery log, newest first; `before` continues a page (the `next` of the previous one). */
  async deliveries(
    tenantId: string,
    endpointId: string,
    page: { limit: number; before?: string },
  ): Promise<RpcResult<{ items: DeliveryView[]; next?: string }>> {
    const bound = this.#bind(tenantId);
    if (!bound.ok) return bound;
    const before = page.before === undefined ? undefined : Number(page.before);
    if (before !== undefined && !Number.isSafeInteger(before))
      return refusal(fail("bad_request", "Invalid cursor."));
    const log = deliveryLog(this.ctx.storage.sql, endpointId, {
      limit: page.limit,
      ...(before !== undefined ? { before } : {}),
    });
    const last = log.items.at(-1);
    return ok({
      items: log.items.map(deliveryView),
      ...(log.hasMore && last !== undefined ? { next: String(last.seq) } : {}),
    });
  }

  /** RPC: delivers the delivery's event to its endpoint again, as a new delivery with the same `webhook-id`. */
  async redeliver(
    tenantId: string,
    endpointId: string,
    deliveryId: string,
  ): Promise<RpcResult<{ id: string }>> {
    const bound = this.#bind(tenantId);
    if (!bound.ok) return bound;
    if (!readEndpoints(this.ctx.storage.sql).some((e) => e.id === endpointId))
      await this.#loadEndpoints(tenantId);
    const now = this.#deps.now();
    const made = redeliver(this.ctx.storage.sql, endpointId, deliveryId, now, REDELIVERY_LIMIT);
    if (!made.ok && made.reason === "not_found") return refusal(fail("not_found", "Delivery not found."));
    if (!made.ok) {
      return refusal({
        ...fail(
          "rate_limited",
          `This event was redelivered to this endpoint ${REDELIVERY_LIMIT.max} times in the last hour; try again later.`,
        ),
        retryAfter: Math.max(1, Math.ceil((made.retryAt - now) / 1000)),
      });
    }
    await this.#wake(now);
    return ok({ id: made.id });
  }

  /** Delivers every due lane head, round after round, then sleeps until the next one is due. */
  override async alarm(): Promise<void> {
    const tenantId = readQueueMeta(this.ctx.storage.sql, TENANT_KEY);
    if (tenantId === null) return;
    const endpoints = new Map(readEndpoints(this.ctx.storage.sql).map((e) => [e.id, e]));
    for (let round = 0; round < ROUNDS_PER_ALARM; round++) {
      const due = dueDeliveries(this.ctx.storage.sql, this.#deps.now(), DELIVERY_BATCH);
      if (due.length === 0) break;
      await Promise.all(due.map((d) => this.#attempt(tenantId, endpoints.get(d.delivery.endpointId), d)));
    }
    const now = this.#deps.now();
    const pruned = Number(readQueueMeta(this.ctx.storage.sql, PRUNED_KEY) ?? 0);
    if (now - pruned > PRUNE_EVERY_MS) {
      pruneEventQueue(this.ctx.storage.sql, now - DELIVERY_LOG_RETENTION_MS);
      writeQueueMeta(this.ctx.storage.sql, PRUNED_KEY, String(now));
    }
    const next = nextDueAt(this.ctx.storage.sql);
    if (next !== null) await this.ctx.storage.setAlarm(this.#realTime(Math.max(next, now)));
  }

  async #attempt(
    tenantId: string,
    endpoint: EndpointCopy | undefined,
    { delivery, body }: { delivery: DeliveryRow; body: string | null },
  ): Promise<void> {
    const sql = this.ctx.storage.sql;
    const failed = { status: "failed" as const, statusCode: null, nextAttemptAt: null };
    // An endpoint gone since, or an event erased since: nothing is sent.
    if (endpoint === undefined || body === null) return recordAttempt(sql, delivery.id, failed);
    const problem = toolUrlProblem(endpoint.url, {
      platformHosts: publicHosts(this.env),
      allowLocalHttp: localHttpAllowed(this.env.ENVIRONMENT),
    });
    if (problem !== null) return recordAttempt(sql, delivery.id, failed);
    let secret: string;
    try {
      secret = await this.#secret(tenantId, endpoint);
    } catch (error) {
      console.error(
        JSON.stringify({ msg: "webhook secret unreadable", endpointId: endpoint.id, error: String(error) }),
      );
      return recordAttempt(sql, delivery.id, failed);
    }
    const now = this.#deps.now();
    const result = await attemptDelivery({
      url: endpoint.url,
      secret,
      eventId: delivery.eventId,
      body,
      fetch: this.#deps.fetch,
      now,
    });
    const delay = (this.#deps.retryDelaysMs ?? retryDelays(this.env))[delivery.attempts];
    if (result.outcome === "retry" && delay !== undefined) {
      recordAttempt(sql, delivery.id, {
        status: "pending",
        statusCode: result.statusCode,
        nextAttemptAt: this.#deps.now() + delay,
      });
      return;
    }
    recordAttempt(sql, delivery.id, {
      status: result.outcome === "succeeded" ? "succeeded" : "failed",
      statusCode: result.statusCode,
      nextAttemptAt: null,
    });
  }

  async #secret(tenantId: string, endpoint: EndpointCopy): Promise<string> {
    const key = `${endpoint.id}:${endpoint.sealed.ciphertext}`;
    const cached = this.#secrets.get(key);
    if (cached !== undefined) return cached;
    const secret = await openSecret(
      this.env.SECRETS_KEY,
      tenantId,
      webhookSecretAlias(endpoint.id),
      endpoint.sealed,
    );
    this.#secrets.set(key, secret);
    return secret;
  }

  /** The object serves the one tenant it is named after; the first call records it. */
  #bind(tenantId: string): RpcResult<null> {
    if (typeof tenantId !== "string" || tenantId === "") return refusal(fail("bad_request", "No tenant."));
    const stored = readQueueMeta(this.ctx.storage.sql, TENANT_KEY);
    if (stored === null) writeQueueMeta(this.ctx.storage.sql, TENANT_KEY, tenantId);
    else if (stored !== tenantId)
      return refusal(fail("forbidden", "This events object serves another tenant."));
    return ok(null);
  }

  /** The subscribed types for a listening thread, which is kept on the list; none while the copy was never loaded. */
  #grant(address: ThreadAddress, now: number): SubscriptionGrant | undefined {
    const sql = this.ctx.storage.sql;
    if (readQueueMeta(sql, LOADED_KEY) === null) return undefined;
    keepListener(
      sql,
      { threadId: address.threadId, address },
      now + SUBSCRIPTION_PUSH_MS,
      now + SUBSCRIPTION_LEASE_MS,
    );
    return {
      types: subscribedTypes(readEndpoints(sql)),
      epoch: Number(readQueueMeta(sql, EPOCH_KEY) ?? 0),
    };
  }

  /** Tells each listening thread that the subscribed types changed; a thread not reached trusts its set no longer than its lease. */
  async #announce(epoch: number, listeners: { threadId: string; address: unknown }[]): Promise<void> {
    for (let i = 0; i < listeners.length; i += ANNOUNCE_BATCH) {
      await Promise.all(
        listeners.slice(i, i + ANNOUNCE_BATCH).map(async ({ threadId, address }) => {
          try {
            const parsed = threadAddressSchema.parse(address);
            const stub = await threadStub(this.env, parsed);
            await stub.eventSubscriptionsChanged(parsed, epoch);
          } catch (error) {
            console.warn(
              JSON.stringify({ msg: "subscription change not announced", threadId, error: String(error) }),
            );
          }
        }),
      );
    }
  }

  async #loadEndpoints(tenantId: string): Promise<void> {
    const { items } = await listWebhookEndpoints(this.env.DB, tenantId, { limit: MAX_WEBHOOK_ENDPOINTS });
    const now = this.#deps.now();
    const sql = this.ctx.storage.sql;
    const before = subscribedTypes(readEndpoints(sql)).join(",");
    const change = this.ctx.storage.transactionSync(() => {
      replaceEndpoints(
        this.ctx.storage.sql,
        items.map((e) => ({
          id: e.id,
          url: e.url,
          events: e.events,
          sealed: { ciphertext: e.secretCiphertext, iv: e.secretIv, keyId: e.secretKeyId },
        })),
      );
      writeQueueMeta(this.ctx.storage.sql, LOADED_KEY, String(now));
      if (subscribedTypes(readEndpoints(sql)).join(",") === before) return null;
      const epoch = Number(readQueueMeta(sql, EPOCH_KEY) ?? 0) + 1;
      writeQueueMeta(sql, EPOCH_KEY, String(epoch));
      return { epoch, listeners: liveListeners(sql, now) };
    });
    if (change !== null) await this.#announce(change.epoch, change.listeners);
  }

  /** A stale copy is refreshed in the background: fan-out never waits for D1. */
  #revalidateEndpoints(tenantId: string): void {
    const loaded = Number(readQueueMeta(this.ctx.storage.sql, LOADED_KEY) ?? 0);
    if (this.#deps.now() - loaded < ENDPOINTS_REVALIDATE_MS) return;
    this.ctx.waitUntil(
      this.#loadEndpoints(tenantId).catch((error: unknown) => {
        console.warn(JSON.stringify({ msg: "webhook endpoints not refreshed", error: String(error) }));
      }),
    );
  }

  /** Brings the alarm forward to `at` (this object's clock) unless it is already due sooner. */
  async #wake(at: number): Promise<void> {
    const target = this.#realTime(at);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > target) await this.ctx.storage.setAlarm(target);
  }

  /** Alarms run on the wall clock; a test clock that was moved on is translated back to it. */
  #realTime(at: number): number {
    return Date.now() + (at - this.#deps.now());
  }
}
