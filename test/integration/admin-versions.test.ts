import { describe, expect, it } from "vitest";
import { digestOf } from "../../src/control/canonical-json";
import { listResponse, versionResponse, versionSummaryResponse } from "../../src/shared/api";
import { fetchWithEnv } from "../helpers/edge-gate";
import {
  api,
  countRows,
  createAgent,
  createTenant,
  expectError,
  fieldPaths,
  json,
  publish,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";

const versionList = listResponse(versionSummaryResponse);

function postVersion(apiKey: string, agentId: string, body: unknown) {
  return api(`/v1/agents/${agentId}/versions`, { method: "POST", key: apiKey, body });
}

describe("POST /v1/agents/:id/versions", () => {
  it("publishes a draft revision as version 1 with the artifact's digest", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const artifact = validArtifact({ greeting: "Hello!", suggestedPrompts: ["Where is my order?"] });
    await saveDraft(tenant.apiKey, agent.id, 0, artifact);
    const published = await publish(tenant.apiKey, agent.id, 1);
    expect(published.version).toBe(1);
    expect(published.versionId).toMatch(/^ver_[a-z2-7]{26}$/);
    expect(published.digest).toBe(await digestOf(artifact));

    const read = await json(
      await api(`/v1/agents/${agent.id}/versions/1`, { key: tenant.apiKey }),
      200,
      versionResponse,
    );
    expect(read).toMatchObject({ ...published, draftRevision: 1, artifact });
  });

  it("keeps versions immutable while the draft moves on", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact({ name: "First" }));
    const v1 = await publish(tenant.apiKey, agent.id, 1);
    await saveDraft(tenant.apiKey, agent.id, 1, validArtifact({ name: "Second" }));
    const v2 = await publish(tenant.apiKey, agent.id, 2);
    expect(v2.version).toBe(2);
    expect(v2.digest).not.toBe(v1.digest);

    const one = await json(
      await api(`/v1/agents/${agent.id}/versions/1`, { key: tenant.apiKey }),
      200,
      versionResponse,
    );
    expect(one.artifact.name).toBe("First");
    expect(one.digest).toBe(v1.digest);
    const list = await json(
      await api(`/v1/agents/${agent.id}/versions`, { key: tenant.apiKey }),
      200,
      versionList,
    );
    expect(list.items.map((v) => [v.version, v.digest, v.draftRevision])).toEqual([
      [1, v1.digest, 1],
      [2, v2.digest, 2],
    ]);
  });

  it("pages the version list", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact());
    for (let i = 0; i < 3; i++) await publish(tenant.apiKey, agent.id, 1);
    const first = await json(
      await api(`/v1/agents/${agent.id}/versions?limit=2`, { key: tenant.apiKey }),
      200,
      versionList,
    );
    expect(first.items.map((v) => v.version)).toEqual([1, 2]);
    const second = await json(
      await api(`/v1/agents/${agent.id}/versions?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`, {
        key: tenant.apiKey,
      }),
      200,
      versionList,
    );
    expect(second.items.map((v) => v.version)).toEqual([3]);
    expect(second.nextCursor).toBeUndefined();

    // The cursor of one agent's versions does not continue another agent's list.
    const other = await createAgent(tenant.apiKey);
    const res = await api(`/v1/agents/${other.id}/versions?cursor=${encodeURIComponent(first.nextCursor!)}`, {
      key: tenant.apiKey,
    });
    await expectError(res, 400, "bad_request");
  });

  it.each([
    ["no model", { model: undefined }, ["model"]],
    ["an unknown provider", { model: { provider: "mystery", model: "x" } }, ["model.provider"]],
    ["an unknown field", { colour: "blue" }, ["colour"]],
    ["a schemaVersion 2", { schemaVersion: 2 }, ["schemaVersion"]],
    [
      "local options on another provider",
      { model: { provider: "anthropic", model: "c", local: { chunks: 2 } } },
      ["model.local"],
    ],
  ])(
    "refuses a draft with %s with 400 naming the fields (never 409), storing no version",
    async (_label, change, paths) => {
      const tenant = await createTenant();
      const agent = await createAgent(tenant.apiKey);
      const definition = JSON.parse(JSON.stringify(validArtifact(change)));
      await saveDraft(tenant.apiKey, agent.id, 0, definition);
      const error = await expectError(
        await postVersion(tenant.apiKey, agent.id, { draftRevision: 1 }),
        400,
        "bad_request",
      );
      expect(fieldPaths(error)).toEqual(paths);
      expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
    },
  );

  it("refuses a draft revision that is no longer current with 412", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact());
    await saveDraft(tenant.apiKey, agent.id, 1, validArtifact({ name: "Newer" }));
    await expectError(
      await postVersion(tenant.apiKey, agent.id, { draftRevision: 1 }),
      412,
      "precondition_failed",
    );
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });

  it("refuses to publish a version on the local model outside development, naming model.provider", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact());
    const publishIn = (environment: string, draftRevision = 1) =>
      fetchWithEnv({ ENVIRONMENT: environment }, `/v1/agents/${agent.id}/versions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${tenant.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ draftRevision }),
      });
    for (const environment of ["staging", "production"]) {
      const error = await expectError(await publishIn(environment), 400, "bad_request");
      expect(fieldPaths(error)).toEqual(["model.provider"]);
    }
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);

    // Another provider publishes there; the local model still publishes in development.
    await saveDraft(
      tenant.apiKey,
      agent.id,
      1,
      validArtifact({ model: { provider: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" } }),
    );
    expect((await publishIn("staging", 2)).status).toBe(201);
    await saveDraft(tenant.apiKey, agent.id, 2, validArtifact());
    expect((await publishIn("development", 3)).status).toBe(201);
  });

  it("answers publishing without a draft with 404", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await expectError(await postVersion(tenant.apiKey, agent.id, { draftRevision: 1 }), 404, "not_found");
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });

  it.each([
    ["draftRevision 0", { draftRevision: 0 }],
    ["a string revision", { draftRevision: "1" }],
    ["a fractional revision", { draftRevision: 1.5 }],
    ["an unknown field", { draftRevision: 1, artifact: validArtifact() }],
    ["no revision", {}],
  ])("refuses %s with 400 and stores nothing", async (_label, body) => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact());
    await expectError(await postVersion(tenant.apiKey, agent.id, body), 400, "bad_request");
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });

  it.each(["99", "0", "abc", "1.0", "-1"])("answers GET versions/%s with 404", async (version) => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact());
    await publish(tenant.apiKey, agent.id, 1);
    await expectError(
      await api(`/v1/agents/${agent.id}/versions/${version}`, { key: tenant.apiKey }),
      404,
      "not_found",
    );
  });

  it("answers an unknown agent's versions with 404", async () => {
    const tenant = await createTenant();
    await expectError(await api("/v1/agents/agt_nothere/versions", { key: tenant.apiKey }), 404, "not_found");
    await expectError(
      await postVersion(tenant.apiKey, "agt_nothere", { draftRevision: 1 }),
      404,
      "not_found",
    );
  });
});
