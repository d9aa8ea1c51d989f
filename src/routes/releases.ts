// Tenant admin: weighted releases of an agent's versions per environment, and switching the active one.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { Release } from "../control/deployment-store";
import { errors, failureError, fromDatabase, unwrap } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { loadAgent } from "../http/load-agent";
import { operation } from "../http/openapi";
import { deploymentStore } from "../http/store";
import { invalidateActiveRelease } from "../services/launch/active-release-cache";
import { enforceGate } from "../services/release-gate";
import { activationRefusal, releaseRuntime, runtimeRefusal } from "../services/release-runtime";
import { createReleaseRequest, listResponse, type ReleaseResponse, releaseResponse } from "../shared/api";
import { activateReleaseRequest, type GateOverride } from "../shared/evals-api";
import { pageQuery } from "../shared/sessions-api";
import { gateOverrides, recordGateOverride } from "../storage/d1/release-gates";

function releaseView(release: Release, overrides?: Map<string, GateOverride[]>): ReleaseResponse {
  const forced = overrides?.get(release.id);
  return {
    id: release.id,
    agentId: release.agentId,
    environment: release.environment,
    runtimeRevision: release.runtimeRevision,
    allocations: release.allocations.map((a) => ({
      version: a.version,
      versionId: a.versionId,
      weight: a.weight,
    })),
    createdAt: release.createdAt,
    activatedAt: release.activatedAt,
    active: release.active,
    ...(forced !== undefined ? { gateOverrides: forced } : {}),
  };
}

/** The release's views with the gate overrides recorded for them (docs/evals.md#the-release-gate). */
async function releaseViews(c: AppContext, list: Release[]): Promise<ReleaseResponse[]> {
  const overrides = await fromDatabase(
    gateOverrides(
      c.env.DB,
      c.get("tenant").tenantId,
      list.map((r) => r.id),
    ),
  );
  return list.map((release) => releaseView(release, overrides));
}

async function recordOverride(
  c: AppContext,
  releaseId: string,
  override: GateOverride | null,
): Promise<void> {
  if (override !== null)
    await fromDatabase(recordGateOverride(c.env.DB, c.get("tenant").tenantId, releaseId, override));
}

export const releases = new Hono<AppEnv>()
  .post(
    "/",
    describeRoute(
      operation({
        tag: "Releases",
        summary: "Create a release: versions with weights summing to 10,000, on a runtime revision",
        description:
          "`runtimeRevisionId` (default: this deployment's, `GET /v1/runtime`) names a registered runtime revision; an unknown one is 400. A version needing a capability that revision lacks is 409, reason `runtime_incompatible`. Refused 409 `eval_gate` when it raises a version's weight that has not passed the agent's release gate; `force: true` with a `reason` goes past it and is recorded in `gateOverrides`.",
        auth: "tenantKey",
        body: createReleaseRequest,
        response: { status: 201, schema: releaseResponse },
        errors: [404, 409],
      }),
    ),
    async (c) => {
      const { runtimeRevisionId, force, reason, ...input } = await readJson(c, createReleaseRequest);
      const agent = await loadAgent(c);
      const store = deploymentStore(c);
      const runtime = await releaseRuntime(store, runtimeRevisionId, "runtimeRevisionId");
      const refusal = await runtimeRefusal(store, agent.tenantId, agent.id, runtime, input.allocations);
      if (refusal !== null) throw failureError(refusal);
      const override = await enforceGate(c.env, store, agent, {
        action: "create",
        environment: input.environment,
        allocations: input.allocations,
        ...(force !== undefined ? { force } : {}),
        ...(reason !== undefined ? { reason } : {}),
        apiKeyId: c.get("tenant").apiKeyId,
      });
      const release = unwrap(
        await store.createRelease(agent.tenantId, agent.id, { ...input, runtimeRevision: runtime.id }),
      );
      await recordOverride(c, release.id, override);
      return c.json((await releaseViews(c, [release]))[0], 201);
    },
  )
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Releases",
        summary: "List releases",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(releaseResponse) },
        errors: [400, 404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const list = `releases:${agent.id}`;
      const page = await readPage(c, list);
      const result = await deploymentStore(c).listReleases(agent.tenantId, agent.id, page);
      return c.json(await pageBody(c, list, await releaseViews(c, result.items), result.next));
    },
  )
  .get(
    "/:releaseId",
    describeRoute(
      operation({
        tag: "Releases",
        summary: "Get a release",
        auth: "tenantKey",
        response: { status: 200, schema: releaseResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const release = await deploymentStore(c).getRelease(agent.tenantId, agent.id, c.req.param("releaseId"));
      if (release === null) throw errors.notFound("Release");
      return c.json((await releaseViews(c, [release]))[0]);
    },
  )
  .post(
    "/:releaseId/activate",
    describeRoute(
      operation({
        tag: "Releases",
        summary: "Make this release the active one of its environment",
        description:
          "409 `runtime_incompatible` when the release's runtime revision, as registered now, lacks a capability one of its versions needs. Refused 409 `eval_gate` when it raises a version's weight that has not passed the agent's release gate; `{force: true, reason}` goes past it and is recorded in the release's `gateOverrides`.",
        auth: "tenantKey",
        body: activateReleaseRequest,
        response: { status: 200, schema: releaseResponse },
        errors: [404, 409],
      }),
    ),
    async (c) => {
      // The body is optional: `{force: true, reason}` only to go past a failing release gate.
      const { force, reason } =
        c.req.header("Content-Type") === undefined ? {} : await readJson(c, activateReleaseRequest);
      const agent = await loadAgent(c);
      const store = deploymentStore(c);
      const target = await store.getRelease(agent.tenantId, agent.id, c.req.param("releaseId"));
      if (target === null) throw errors.notFound("Release");
      // Re-checked here: the release's runtime may have been registered again with fewer capabilities since.
      const refusal = await activationRefusal(store, target);
      if (refusal !== null) throw failureError(refusal);
      const override = target.active
        ? null
        : await enforceGate(c.env, store, agent, {
            action: "activate",
            environment: target.environment,
            allocations: target.allocations,
            ...(force !== undefined ? { force } : {}),
            ...(reason !== undefined ? { reason } : {}),
            apiKeyId: c.get("tenant").apiKeyId,
          });
      const release = unwrap(await store.activateRelease(agent.tenantId, agent.id, target.id));
      // This isolate's launches present the new release at once; others within the cache's 30 s.
      invalidateActiveRelease(agent.tenantId, agent.id);
      await recordOverride(c, release.id, override);
      return c.json((await releaseViews(c, [release]))[0]);
    },
  );
