// Tenant admin: event webhook endpoints (docs/webhooks.md) — CRUD, secrets shown once, the delivery log and redelivery;
// what each change does is src/services/webhooks.ts.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { localHttpAllowed, platformHostsOf, publicHosts, toolUrlProblem } from "../control/url-policy";
import { errors } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import {
  changeWebhook,
  deleteWebhook,
  redeliverWebhook,
  registerWebhook,
  rotateWebhookSecret,
  webhookDeliveries,
} from "../services/webhooks";
import { listResponse } from "../shared/api";
import { pageQuery } from "../shared/sessions-api";
import {
  createWebhookRequest,
  deliveryResponse,
  patchWebhookRequest,
  type WebhookResponse,
  webhookResponse,
  webhookWithSecretResponse,
} from "../shared/webhooks-api";
import {
  getWebhookEndpoint,
  listWebhookEndpoints,
  type WebhookEndpointRecord,
} from "../storage/d1/webhook-endpoints";

const LIST = "webhooks";
const ID = /^whk_[a-z2-7]{26}$/;
const DELIVERY_ID = /^dlv_[a-z2-7]{26}$/;

function view(e: WebhookEndpointRecord): WebhookResponse {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

/** The tools' URL policy, with this deployment's hosts; local plain http only in development. */
function checkUrl(c: AppContext, url: string): void {
  const problem = toolUrlProblem(url, {
    platformHosts: platformHostsOf(c.req.url, publicHosts(c.env)),
    allowLocalHttp: localHttpAllowed(c.env.ENVIRONMENT),
  });
  if (problem !== null) throw errors.badRequest("Invalid webhook URL.", [{ path: "url", message: problem }]);
}

/** One of the caller's endpoints; another tenant's, or an id that cannot be one, is simply not found. */
async function endpointParam(c: AppContext): Promise<WebhookEndpointRecord> {
  const id = c.req.param("webhookId") ?? "";
  const endpoint = ID.test(id) ? await getWebhookEndpoint(c.env.DB, c.get("tenant").tenantId, id) : null;
  if (endpoint === null) throw errors.notFound("Webhook");
  return endpoint;
}

export const webhooks = new Hono<AppEnv>()
  .use("*", tenantAuth, requireAdminForWrites)
  .post(
    "/",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "Register an event webhook (its secret is shown once)",
        auth: "tenantKey",
        body: createWebhookRequest,
        response: { status: 201, schema: webhookWithSecretResponse },
        errors: [409],
      }),
    ),
    async (c) => {
      const input = await readJson(c, createWebhookRequest);
      checkUrl(c, input.url);
      const { endpoint, secret } = await registerWebhook(c.env, c.get("tenant").tenantId, input);
      return c.json({ ...view(endpoint), secret }, 201);
    },
  )
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "List the tenant's webhooks",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(webhookResponse) },
      }),
    ),
    async (c) => {
      const page = await readPage(c, LIST);
      const result = await listWebhookEndpoints(c.env.DB, c.get("tenant").tenantId, page);
      const next = result.hasMore ? result.items.at(-1)?.id : undefined;
      return c.json(await pageBody(c, LIST, result.items.map(view), next));
    },
  )
  .get(
    "/:webhookId",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "Read a webhook",
        auth: "tenantKey",
        response: { status: 200, schema: webhookResponse },
        errors: [404],
      }),
    ),
    async (c) => c.json(view(await endpointParam(c))),
  )
  .patch(
    "/:webhookId",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "Change a webhook's URL, events or description",
        auth: "tenantKey",
        body: patchWebhookRequest,
        response: { status: 200, schema: webhookResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const endpoint = await endpointParam(c);
      const patch = await readJson(c, patchWebhookRequest);
      if (patch.url !== undefined) checkUrl(c, patch.url);
      return c.json(view(await changeWebhook(c.env, endpoint, patch)));
    },
  )
  .delete(
    "/:webhookId",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "Delete a webhook",
        auth: "tenantKey",
        response: { status: 204, description: "Deleted." },
        errors: [404],
      }),
    ),
    async (c) => {
      const endpoint = await endpointParam(c);
      await deleteWebhook(c.env, endpoint);
      return c.body(null, 204);
    },
  )
  .post(
    "/:webhookId/rotate-secret",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "Replace a webhook's secret (the new one is shown once)",
        auth: "tenantKey",
        response: { status: 200, schema: webhookWithSecretResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const endpoint = await endpointParam(c);
      const rotated = await rotateWebhookSecret(c.env, endpoint);
      return c.json({ ...view(rotated.endpoint), secret: rotated.secret });
    },
  )
  .get(
    "/:webhookId/deliveries",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "The delivery log of a webhook, newest first",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(deliveryResponse) },
        errors: [404, 502],
      }),
    ),
    async (c) => {
      const endpoint = await endpointParam(c);
      const list = `webhook-deliveries:${endpoint.id}`;
      const page = await readPage(c, list);
      const log = await webhookDeliveries(c.env, endpoint, page);
      return c.json(await pageBody(c, list, log.items, log.next));
    },
  )
  .post(
    "/:webhookId/deliveries/:deliveryId/redeliver",
    describeRoute(
      operation({
        tag: "Webhooks",
        summary: "Deliver an event again (same webhook-id); at most 10 times per event and endpoint per hour",
        auth: "tenantKey",
        response: { status: 202, schema: z.object({ id: z.string() }) },
        errors: [404, 429, 502],
      }),
    ),
    async (c) => {
      const endpoint = await endpointParam(c);
      const deliveryId = c.req.param("deliveryId");
      if (!DELIVERY_ID.test(deliveryId)) throw errors.notFound("Delivery");
      const created = await redeliverWebhook(c.env, endpoint, deliveryId);
      return c.json({ id: created.id }, 202);
    },
  );
