// Tenant admin: publishing a draft revision as an immutable, digest-pinned version, and reading versions.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { AgentVersion } from "../control/deployment-store";
import { errors, unwrap } from "../errors";
import { requestArtifactIssues } from "../http/artifact-checks";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { loadAgent } from "../http/load-agent";
import { operation } from "../http/openapi";
import { deploymentStore } from "../http/store";
import {
  listResponse,
  publishedVersionResponse,
  publishVersionRequest,
  type VersionSummaryResponse,
  versionResponse,
  versionSummaryResponse,
} from "../shared/api";
import { pageQuery } from "../shared/sessions-api";

function summaryView(version: AgentVersion): VersionSummaryResponse {
  return {
    versionId: version.id,
    version: version.version,
    digest: version.digest,
    draftRevision: version.draftRevision,
    createdAt: version.createdAt,
  };
}

export const versions = new Hono<AppEnv>()
  .post(
    "/",
    describeRoute(
      operation({
        tag: "Versions",
        summary: "Publish a draft revision as an immutable version",
        auth: "tenantKey",
        body: publishVersionRequest,
        response: { status: 201, schema: publishedVersionResponse },
        errors: [404, 409],
      }),
    ),
    async (c) => {
      const input = await readJson(c, publishVersionRequest);
      const agent = await loadAgent(c);
      const store = deploymentStore(c);
      // The schema cannot know the host the platform was reached on, nor the environment's rules (local http, the local model).
      const draft = await store.getDraft(agent.tenantId, agent.id);
      if (draft !== null && draft.revision === input.draftRevision) {
        const own = requestArtifactIssues(c.env, c.req.url, draft.definition);
        if (own.length > 0) throw errors.badRequest("Draft is not a valid agent artifact.", own);
      }
      const version = unwrap(await store.publishDraft(agent.tenantId, agent.id, input.draftRevision));
      return c.json({ versionId: version.id, version: version.version, digest: version.digest }, 201);
    },
  )
  // Lists leave artifacts out (each can be 256 KiB); GET one version for its artifact.
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Versions",
        summary: "List versions (without artifacts)",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(versionSummaryResponse) },
        errors: [400, 404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const list = `versions:${agent.id}`;
      const page = await readPage(c, list);
      const result = await deploymentStore(c).listVersions(agent.tenantId, agent.id, page);
      return c.json(await pageBody(c, list, result.items.map(summaryView), result.next));
    },
  )
  .get(
    "/:version",
    describeRoute(
      operation({
        tag: "Versions",
        summary: "Get one version with its artifact",
        auth: "tenantKey",
        response: { status: 200, schema: versionResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const raw = c.req.param("version");
      if (!/^[1-9][0-9]{0,14}$/.test(raw)) throw errors.notFound("Version");
      const version = unwrap(await deploymentStore(c).getVersion(agent.tenantId, agent.id, Number(raw)));
      return c.json({ ...summaryView(version), artifact: version.artifact });
    },
  );
