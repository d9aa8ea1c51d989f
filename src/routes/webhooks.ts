// Tenant admin: event webhook endpoints (docs/webhooks.md) — CRUD, secrets shown once, the delivery log and redelivery.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { sealSecret } from "../auth/secret-box";
import { newId } from "../control/ids";
import { localHttpAllowed, platformHostsOf, publicHosts, toolUrlProblem } from "../control/url-policy";
import { AppError, errors, type Result, unwrap } from "../errors";
import { tenantEvents, webhookSecretAlias } from "../events/tenant-events";
import type { AppContext, AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
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
  countWebhookEndpoints,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  MAX_WEBHOOK_ENDPOINTS,
  updateWebhookEndpoint,
  type WebhookEndpointRecord,
} from "../storage/d1/webhook-endpoints";
import { newWebhookSecret } from "../tools/webhook-signature";

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
async function endpointsChanged(c: AppContext): Promise<void> {
  const tenantId = c.get("tenant").tenantId;
  try {
    unwrap(await tenantEvents(c.env, tenantId).endpointsChanged(tenantId));
  } catch (error) {
    console.warn(JSON.stringify({ msg: "webhook endpoints not refreshed", error: String(error) }));
  }
}

async function sealed(c: AppContext, id: string, secret: string) {
  return sealSecret(c.env.SECRETS_KEY, c.get("tenant").tenantId, webhookSecretAlias(id), secret);
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
      const tenantId = c.get("tenant").tenantId;
      if ((await countWebhookEndpoints(c.env.DB, tenantId)) >= MAX_WEBHOOK_ENDPOINTS) {
        throw errors.conflict(`A tenant may have at most ${MAX_WEBHOOK_ENDPOINTS} webhooks.`);
      }
      const id = newId("whk");
      const secret = newWebhookSecret();
      const box = await sealed(c, id, secret);
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
      await insertWebhookEndpoint(c.env.DB, endpoint);
      await endpointsChanged(c);
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
      const next = {
        url: patch.url ?? endpoint.url,
        events: patch.events ?? endpoint.events,
        description: patch.description === undefined ? endpoint.description : patch.description,
        updatedAt: new Date().toISOString(),
      };
      if (!(await updateWebhookEndpoint(c.env.DB, endpoint.tenantId, endpoint.id, next)))
        throw errors.notFound("Webhook");
      await endpointsChanged(c);
      return c.json(view({ ...endpoint, ...next }));
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
      if (!(await deleteWebhookEndpoint(c.env.DB, endpoint.tenantId, endpoint.id)))
        throw errors.notFound("Webhook");
      await endpointsChanged(c);
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
      const secret = newWebhookSecret();
      const box = await sealed(c, endpoint.id, secret);
      const next = {
        url: endpoint.url,
        events: endpoint.events,
        description: endpoint.description,
        secret: box,
        updatedAt: new Date().toISOString(),
      };
      if (!(await updateWebhookEndpoint(c.env.DB, endpoint.tenantId, endpoint.id, next)))
        throw errors.notFound("Webhook");
      await endpointsChanged(c);
      return c.json({ ...view({ ...endpoint, updatedAt: next.updatedAt }), secret });
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
      const stub = tenantEvents(c.env, endpoint.tenantId);
      const log = await events(() =>
        stub.deliveries(endpoint.tenantId, endpoint.id, {
          limit: page.limit,
          ...(page.after !== undefined ? { before: page.after } : {}),
        }),
      );
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
      const stub = tenantEvents(c.env, endpoint.tenantId);
      const created = await events(() => stub.redeliver(endpoint.tenantId, endpoint.id, deliveryId));
      return c.json({ id: created.id }, 202);
    },
  );
