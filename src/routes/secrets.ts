// Tenant admin: write-only provider secrets, referred to by alias from artifacts and never returned.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { sealSecret } from "../auth/secret-box";
import { errors } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { listResponse, putSecretRequest, SECRET_ALIAS, secretResponse } from "../shared/api";
import { pageQuery } from "../shared/sessions-api";
import { deleteTenantSecret, listTenantSecrets, upsertTenantSecret } from "../storage/d1/tenant-credentials";

const LIST = "secrets";

function aliasParam(c: AppContext): string {
  const alias = c.req.param("alias") ?? "";
  if (!SECRET_ALIAS.test(alias)) {
    throw errors.badRequest("Invalid secret alias.", [
      {
        path: "alias",
        message: "must be 1-64 lowercase letters, digits, '-' or '_', starting with a letter or digit",
      },
    ]);
  }
  return alias;
}

export const secrets = new Hono<AppEnv>()
  .use("*", tenantAuth, requireAdminForWrites)
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Secrets",
        summary: "List secret aliases (never values)",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(secretResponse) },
        errors: [400],
      }),
    ),
    async (c) => {
      const page = await readPage(c, LIST);
      const result = await listTenantSecrets(c.env.DB, c.get("tenant").tenantId, page);
      const next = result.hasMore ? result.items.at(-1)?.alias : undefined;
      return c.json(await pageBody(c, LIST, result.items, next));
    },
  )
  .put(
    "/:alias",
    describeRoute(
      operation({
        tag: "Secrets",
        summary: "Set a provider secret (write-only, encrypted at rest)",
        auth: "tenantKey",
        body: putSecretRequest,
        response: { status: 204, description: "Stored." },
      }),
    ),
    async (c) => {
      const alias = aliasParam(c);
      const { value } = await readJson(c, putSecretRequest);
      const tenantId = c.get("tenant").tenantId;
      const sealed = await sealSecret(c.env.SECRETS_KEY, tenantId, alias, value);
      await upsertTenantSecret(c.env.DB, { tenantId, alias, ...sealed }, new Date().toISOString());
      return c.body(null, 204);
    },
  )
  .delete(
    "/:alias",
    describeRoute(
      operation({
        tag: "Secrets",
        summary: "Delete a secret",
        auth: "tenantKey",
        response: { status: 204, description: "Deleted." },
        errors: [400, 404],
      }),
    ),
    async (c) => {
      const alias = aliasParam(c);
      if (!(await deleteTenantSecret(c.env.DB, c.get("tenant").tenantId, alias)))
        throw errors.notFound("Secret");
      return c.body(null, 204);
    },
  );
