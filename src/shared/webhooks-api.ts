// The event webhooks' wire shapes (docs/webhooks.md): endpoint requests and responses, delivery log items, the event body.
import { z } from "zod";

export const EVENT_TYPES = [
  "thread.created",
  "run.succeeded",
  "run.failed",
  "message.feedback",
  "handoff.requested",
  "session.erased",
  "approval.requested",
  "approval.decided",
  "tool.requested",
  // A suite's eval run finished (docs/evals.md#runs): the one event eval threads ever cause.
  "eval.completed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const eventsField = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .refine((events) => new Set(events).size === events.length, { message: "must not repeat an event type" });

export const createWebhookRequest = z.strictObject({
  url: z.string().min(1).max(2048),
  events: eventsField,
  description: z.string().trim().max(500).optional(),
});

export const patchWebhookRequest = z
  .strictObject({
    url: z.string().min(1).max(2048).optional(),
    events: eventsField.optional(),
    description: z.string().trim().max(500).nullable().optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, { message: "must change at least one field" });

export const webhookResponse = z.strictObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  description: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
/** Create and rotate-secret: the only responses that carry the secret. */
export const webhookWithSecretResponse = webhookResponse.extend({ secret: z.string().startsWith("whsec_") });

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const deliveryResponse = z.strictObject({
  id: z.string(),
  eventId: z.string(),
  eventType: z.enum(EVENT_TYPES),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().optional(),
  nextAttemptAt: z.string().optional(),
  createdAt: z.string(),
});
export type DeliveryView = z.infer<typeof deliveryResponse>;

/** What a receiver gets as the body of every delivery. */
export const eventBodySchema = z.strictObject({
  id: z.string().startsWith("evt_"),
  type: z.enum(EVENT_TYPES),
  createdAt: z.string(),
  tenantId: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type EventBody = z.infer<typeof eventBodySchema>;

export type WebhookResponse = z.infer<typeof webhookResponse>;
