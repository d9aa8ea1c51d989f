// A tenant's event webhooks (docs/webhooks.md): endpoints registered, changed, deleted and their secrets rotated (each
// change in D1 first, then the events object told to re-read), and the delivery log and redelivery it keeps.
import type { z } from "zod";
import { sealSecret } from "../auth/secret-box";
import { newId } from "../control/ids";
import { AppError, errors, type Result, unwrap } from "../errors";
import { tenantEvents, webhookSecretAlias } from "../events/tenant-events";
import type { createWebhookRequest, patchWebhookRequest } from "../shared/webhooks-api";
import {
  countWebhookEndpoints,
  deleteWebhookEndpoint,
  insertWebhookEndpoint,
  MAX_WEBHOOK_ENDPOINTS,
  updateWebhookEndpoint,
  type WebhookEndpointRecord,
} from "../storage/d1/webhook-endpoints";
import { newWebhookSecret } from "../tools/webhook-signature";

/** An endpoint with the plaintext secret, which goes to the tenant once and is never shown again. */
export interface WebhookWithSecret {
  endpoint: WebhookEndpointRecord;
  secret: string;
}

/** An RPC to the tenant's events object; an object that cannot be reached is a 502, its refusals are its own. */
async function events<T>(rpc: () => Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await rpc();
  } catch (cause) {
    throw new AppError("upstream_unavailable", "Webhook deliveries are unavailable; try again.", { cause });
  }
  return unwrap(result);
}

/** Tells the events object to re-read the endpoints; the change is in D1 already, so a failure only logs. */
async function endpointsChanged(env: Env, tenantId: string): Promise<void> {
  try {
    unwrap(await tenantEvents(env, tenantId).endpointsChanged(tenantId));
  } catch (error) {
    console.warn(JSON.stringify({ msg: "webhook endpoints not refreshed", error: String(error) }));
  }
}

function sealed(env: Env, tenantId: string, id: string, secret: string) {
  return sealSecret(env.SECRETS_KEY, tenantId, webhookSecretAlias(id), secret);
}

/** Registers an endpoint (its URL already checked) with a new secret; 409 past the tenant's maximum. */
export async function registerWebhook(
  env: Env,
  tenantId: string,
  input: z.infer<typeof createWebhookRequest>,
): Promise<WebhookWithSecret> {
  if ((await countWebhookEndpoints(env.DB, tenantId)) >= MAX_WEBHOOK_ENDPOINTS) {
    throw errors.conflict(`A tenant may have at most ${MAX_WEBHOOK_ENDPOINTS} webhooks.`);
  }
  const id = newId("whk");
  const secret = newWebhookSecret();
  const box = await sealed(env, tenantId, id, secret);
  const now = new Date().toISOString();
  const endpoint: WebhookEndpointRecord = {
    tenantId,
    id,
    url: input.url,
    events: input.events,
    description: input.description ?? null,
    secretCiphertext: box.ciphertext,
    secretIv: box.iv,
    secretKeyId: box.keyId,
    createdAt: now,
    updatedAt: now,
  };
  await insertWebhookEndpoint(env.DB, endpoint);
  await endpointsChanged(env, tenantId);
  return { endpoint, secret };
}

/** Changes an endpoint's URL (already checked), events or description; answers the endpoint as it now is. */
export async function changeWebhook(
  env: Env,
  endpoint: WebhookEndpointRecord,
  patch: z.infer<typeof patchWebhookRequest>,
): Promise<WebhookEndpointRecord> {
  const next = {
    url: patch.url ?? endpoint.url,
    events: patch.events ?? endpoint.events,
    description: patch.description === undefined ? endpoint.description : patch.description,
    updatedAt: new Date().toISOString(),
  };
  if (!(await updateWebhookEndpoint(env.DB, endpoint.tenantId, endpoint.id, next)))
    throw errors.notFound("Webhook");
  await endpointsChanged(env, endpoint.tenantId);
  return { ...endpoint, ...next };
}

export async function deleteWebhook(env: Env, endpoint: WebhookEndpointRecord): Promise<void> {
  if (!(await deleteWebhookEndpoint(env.DB, endpoint.tenantId, endpoint.id)))
    throw errors.notFound("Webhook");
  await endpointsChanged(env, endpoint.tenantId);
}

/** Replaces an endpoint's secret; the old one stops signing at once. */
export async function rotateWebhookSecret(
  env: Env,
  endpoint: WebhookEndpointRecord,
): Promise<WebhookWithSecret> {
  const secret = newWebhookSecret();
  const box = await sealed(env, endpoint.tenantId, endpoint.id, secret);
  const next = {
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    secret: box,
    updatedAt: new Date().toISOString(),
  };
  if (!(await updateWebhookEndpoint(env.DB, endpoint.tenantId, endpoint.id, next)))
    throw errors.notFound("Webhook");
  await endpointsChanged(env, endpoint.tenantId);
  const rotated = { secretCiphertext: box.ciphertext, secretIv: box.iv, secretKeyId: box.keyId };
  return { endpoint: { ...endpoint, ...rotated, updatedAt: next.updatedAt }, secret };
}

/** One page of an endpoint's delivery log, newest first, from the tenant's events object. */
export function webhookDeliveries(
  env: Env,
  endpoint: WebhookEndpointRecord,
  page: { limit: number; after?: string },
) {
  const stub = tenantEvents(env, endpoint.tenantId);
  return events(() =>
    stub.deliveries(endpoint.tenantId, endpoint.id, {
      limit: page.limit,
      ...(page.after !== undefined ? { before: page.after } : {}),
    }),
  );
}

/** Delivers an event again (same webhook-id); the events object limits how often. */
export function redeliverWebhook(env: Env, endpoint: WebhookEndpointRecord, deliveryId: string) {
  const stub = tenantEvents(env, endpoint.tenantId);
  return events(() => stub.redeliver(endpoint.tenantId, endpoint.id, deliveryId));
}
