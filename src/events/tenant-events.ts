// What a tenant's events object takes and answers, and how it is reached (docs/webhooks.md). The object itself is
// src/objects/tenant-events.ts.
import type { DeliveryView, EventBody } from "../shared/webhooks-api";
import type { DeliveryRow } from "../storage/events/event-queue";

export interface TenantEventsDeps {
  now(): number;
  fetch: typeof fetch;
  /** The waits after each failed attempt (default `retryDelays(env)`); a test-only subclass passes its own. */
  retryDelaysMs?: readonly number[];
}

/** Events per `accept` call, and the largest event body kept. */
export const MAX_EVENTS_PER_ACCEPT = 100;
export const MAX_EVENT_BODY_BYTES = 64 * 1024;
/** The delivery log and event bodies are kept this long once nothing waits for them. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 86_400_000;
/** Redeliveries one event may have to one endpoint per hour (docs/webhooks.md, "Redelivery"). */
export const REDELIVERY_LIMIT = { max: 10, windowMs: 3_600_000 } as const;

/** The associated data a webhook secret is sealed with: its tenant and endpoint. */
export const webhookSecretAlias = (endpointId: string): string => `webhook:${endpointId}`;

export function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    attempts: row.attempts,
    ...(row.lastStatusCode !== null ? { lastStatusCode: row.lastStatusCode } : {}),
    ...(row.status === "pending" && row.nextAttemptAt !== null
      ? { nextAttemptAt: new Date(row.nextAttemptAt).toISOString() }
      : {}),
    createdAt: new Date(row.createdAt).toISOString(),
  };
}

/** The tenant's events object. */
export function tenantEvents(env: Env, tenantId: string) {
  return env.EVENTS.get(env.EVENTS.idFromName(tenantId));
}

/** An event body as the platform sends it. */
export function eventBody(input: {
  id: string;
  type: EventBody["type"];
  createdAt: number;
  tenantId: string;
  data: Record<string, unknown>;
}): EventBody {
  return {
    id: input.id,
    type: input.type,
    createdAt: new Date(input.createdAt).toISOString(),
    tenantId: input.tenantId,
    data: input.data,
  };
}
