// Tenant admin: publishing a draft revision as an immutable, digest-pinned version, and reading versions.
import { Hono } from "hono";
import type { AgentVersion } from "../control/deployment-store";
import {
  localHttpAllowed,
  modelUrlIssues,
  platformHostsOf,
  platformToolUrlIssues,
  publicHosts,
} from "../control/url-policy";
import { errors, unwrap } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { loadAgent } from "../http/load-agent";
import { deploymentStore } from "../http/store";
import { publishVersionRequest, type VersionSummaryResponse } from "../shared/api";

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
  .post("/", async (c) => {
    const input = await readJson(c, publishVersionRequest);
    const agent = await loadAgent(c);
    const store = deploymentStore(c);
    // Tools and models may never call the platform itself (only the request knows the host it was reached on),
    // and may call local plain http only in development: the schema knows neither.
    const draft = await store.getDraft(agent.tenantId, agent.id);
    if (draft !== null && draft.revision === input.draftRevision) {
      const hosts = platformHostsOf(c.req.url, publicHosts(c.env));
      const allowLocalHttp = localHttpAllowed(c.env.ENVIRONMENT);
      const own = [
        ...modelUrlIssues(draft.definition, { platformHosts: hosts, allowLocalHttp }),
        ...platformToolUrlIssues(draft.definition, hosts, allowLocalHttp),
      ];
      if (own.length > 0) throw errors.badRequest("Draft is not a valid agent artifact.", own);
    }
    const version = unwrap(await store.publishDraft(agent.tenantId, agent.id, input.draftRevision));
    return c.json({ versionId: version.id, version: version.version, digest: version.digest }, 201);
  })
  // Lists leave artifacts out (each can be 256 KiB); GET one version for its artifact.
  .get("/", async (c) => {
    const agent = await loadAgent(c);
    const list = `versions:${agent.id}`;
    const page = await readPage(c, list);
    const result = await deploymentStore(c).listVersions(agent.tenantId, agent.id, page);
    return c.json(await pageBody(c, list, result.items.map(summaryView), result.next));
  })
  .get("/:version", async (c) => {
    const agent = await loadAgent(c);
    const raw = c.req.param("version");
    if (!/^[1-9][0-9]{0,14}$/.test(raw)) throw errors.notFound("Version");
    const version = unwrap(await deploymentStore(c).getVersion(agent.tenantId, agent.id, Number(raw)));
    return c.json({ ...summaryView(version), artifact: version.artifact });
  });
