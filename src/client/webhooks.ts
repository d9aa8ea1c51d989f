// Event webhooks (docs/webhooks.md, docs/webhooks.md): endpoints, their secrets (shown on create and rotate only), the
// delivery log and redelivery.
import type { z } from "zod";
import type {
  createWebhookRequest,
  DeliveryView,
  patchWebhookRequest,
  WebhookResponse,
  webhookWithSecretResponse,
} from "../shared/webhooks-api";
import { type Page, type PageQuery, seg, type Transport } from "./http";

export type { DeliveryView, EventType, WebhookResponse } from "../shared/webhooks-api";
export type CreateWebhookRequest = z.input<typeof createWebhookRequest>;
export type PatchWebhookRequest = z.input<typeof patchWebhookRequest>;
export type WebhookWithSecret = z.infer<typeof webhookWithSecretResponse>;

const pageQuery = (query: PageQuery = {}) => ({ cursor: query.cursor, limit: query.limit });

export class Webhooks {
  constructor(readonly t: Transport) {}
  /** The answer's `secret` (`whsec_…`) is in this response only: keep it. */
  create(body: CreateWebhookRequest): Promise<WebhookWithSecret> {
    return this.t.json("POST", "/v1/webhooks", { body });
  }
  list(query?: PageQuery): Promise<Page<WebhookResponse>> {
    return this.t.json("GET", "/v1/webhooks", { query: pageQuery(query) });
  }
  get(webhookId: string): Promise<WebhookResponse> {
    return this.t.json("GET", `/v1/webhooks/${seg(webhookId)}`);
  }
  update(webhookId: string, patch: PatchWebhookRequest): Promise<WebhookResponse> {
    return this.t.json("PATCH", `/v1/webhooks/${seg(webhookId)}`, { body: patch });
  }
  /** Its pending deliveries and its delivery log go with it. */
  delete(webhookId: string): Promise<void> {
    return this.t.empty("DELETE", `/v1/webhooks/${seg(webhookId)}`);
  }
  /** A new secret, shown in this answer only; every later delivery, retries included, is signed with it. */
  rotateSecret(webhookId: string): Promise<WebhookWithSecret> {
    return this.t.json("POST", `/v1/webhooks/${seg(webhookId)}/rotate-secret`);
  }
  /** The delivery log, newest first. */
  deliveries(webhookId: string, query?: PageQuery): Promise<Page<DeliveryView>> {
    return this.t.json("GET", `/v1/webhooks/${seg(webhookId)}/deliveries`, { query: pageQuery(query) });
  }
  /** Queues a new delivery of the same event (same `webhook-id`); answers the new delivery's id. */
  redeliver(webhookId: string, deliveryId: string): Promise<{ id: string }> {
    return this.t.json("POST", `/v1/webhooks/${seg(webhookId)}/deliveries/${seg(deliveryId)}/redeliver`);
  }
}
