// Tenant admin: weighted releases of an agent's versions per environment, and switching the active one.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { Release } from "../control/deployment-store";
import { errors, failureError, unwrap } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { loadAgent } from "../http/load-agent";
import { operation } from "../http/openapi";
import { deploymentStore } from "../http/store";
import { activationRefusal, releaseRuntime, runtimeRefusal } from "../services/release-runtime";
import { createReleaseRequest, listResponse, type ReleaseResponse, releaseResponse } from "../shared/api";
import { pageQuery } from "../shared/sessions-api";

function releaseView(release: Release): ReleaseResponse {
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
  };
}

export const releases = new Hono<AppEnv>()
  .post(
    "/",
    describeRoute(
      operation({
        tag: "Releases",
        summary: "Create a release: versions with weights summing to 10,000, on a runtime revision",
        description:
          "`runtimeRevisionId` (default: this deployment's, `GET /v1/runtime`) names a registered runtime revision; an unknown one is 400. A version needing a capability that revision lacks is 409, reason `runtime_incompatible`.",
        auth: "tenantKey",
        body: createReleaseRequest,
        response: { status: 201, schema: releaseResponse },
        errors: [404, 409],
      }),
    ),
    async (c) => {
      const { runtimeRevisionId, ...input } = await readJson(c, createReleaseRequest);
      const agent = await loadAgent(c);
      const store = deploymentStore(c);
      const runtime = await releaseRuntime(store, runtimeRevisionId, "runtimeRevisionId");
      const refusal = await runtimeRefusal(store, agent.tenantId, agent.id, runtime, input.allocations);
      if (refusal !== null) throw failureError(refusal);
      const release = unwrap(
        await store.createRelease(agent.tenantId, agent.id, { ...input, runtimeRevision: runtime.id }),
      );
      return c.json(releaseView(release), 201);
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
      return c.json(await pageBody(c, list, result.items.map(releaseView), result.next));
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
      return c.json(releaseView(release));
    },
  )
  .post(
    "/:releaseId/activate",
    describeRoute(
      operation({
        tag: "Releases",
        summary: "Make this release the active one of its environment",
        description:
          "409 `runtime_incompatible` when the release's runtime revision, as registered now, lacks a capability one of its versions needs.",
        auth: "tenantKey",
        response: { status: 200, schema: releaseResponse },
        errors: [404, 409],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const store = deploymentStore(c);
      const releaseId = c.req.param("releaseId");
      const stored = await store.getRelease(agent.tenantId, agent.id, releaseId);
      if (stored === null) throw errors.notFound("Release");
      // Re-checked here: the release's runtime may have been registered again with fewer capabilities since.
      const refusal = await activationRefusal(store, stored);
      if (refusal !== null) throw failureError(refusal);
      const release = unwrap(await store.activateRelease(agent.tenantId, agent.id, releaseId));
      return c.json(releaseView(release));
    },
  );
