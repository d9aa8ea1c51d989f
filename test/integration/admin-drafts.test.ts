import { describe, expect, it } from "vitest";
import { draftResponse } from "../../src/shared/api";
import {
  api,
  countRows,
  createAgent,
  createTenant,
  expectError,
  json,
  putDraft,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";

async function readDraft(apiKey: string, agentId: string) {
  const res = await api(`/v1/agents/${agentId}/draft`, { key: apiKey });
  const etag = res.headers.get("ETag");
  return { etag, body: await json(res, 200, draftResponse) };
}

describe("PUT /v1/agents/:id/draft", () => {
  it('creates with If-Match "0", then moves forward one revision per save', async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await expectError(await api(`/v1/agents/${agent.id}/draft`, { key: tenant.apiKey }), 404, "not_found");

    const first = await putDraft(tenant.apiKey, agent.id, '"0"', validArtifact());
    expect(first.headers.get("ETag")).toBe('"1"');
    expect(await json(first, 200, draftResponse.pick({ revision: true }))).toEqual({ revision: 1 });
    const read = await readDraft(tenant.apiKey, agent.id);
    expect(read.etag).toBe('"1"');
    expect(read.body).toMatchObject({ revision: 1, definition: validArtifact() });

    const second = await putDraft(tenant.apiKey, agent.id, '"1"', validArtifact({ name: "Second" }));
    expect(second.headers.get("ETag")).toBe('"2"');
    expect(await second.json()).toEqual({ revision: 2 });
    expect((await readDraft(tenant.apiKey, agent.id)).body.definition).toEqual(
      validArtifact({ name: "Second" }),
    );
  });

  it("refuses a stale revision with 412 and keeps the newer draft", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact({ name: "One" }));
    await saveDraft(tenant.apiKey, agent.id, 1, validArtifact({ name: "Two" }));

    for (const stale of ['"1"', '"0"', '"3"']) {
      const res = await putDraft(tenant.apiKey, agent.id, stale, validArtifact({ name: "Lost update" }));
      await expectError(res, 412, "precondition_failed");
    }
    const read = await readDraft(tenant.apiKey, agent.id);
    expect(read.etag).toBe('"2"');
    expect(read.body.definition).toEqual(validArtifact({ name: "Two" }));
  });

  it("keeps any JSON object as a draft; validation waits for publishing", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const { revision } = await saveDraft(tenant.apiKey, agent.id, 0, { name: "half-written", extra: [1, 2] });
    expect(revision).toBe(1);
    expect((await readDraft(tenant.apiKey, agent.id)).body.definition).toEqual({
      name: "half-written",
      extra: [1, 2],
    });
  });

  it("requires If-Match (400) and stores nothing without it", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const error = await expectError(
      await putDraft(tenant.apiKey, agent.id, undefined, validArtifact()),
      400,
      "bad_request",
    );
    expect(error.message).toContain("If-Match");
    expect(await countRows("agent_drafts", tenant.tenantId)).toBe(0);
  });

  it.each(["0", "1", 'W/"0"', "*", '"-1"', '"abc"', '"01"', '"0", "1"', '""'])(
    "refuses If-Match %s with 400 and stores nothing",
    async (ifMatch) => {
      const tenant = await createTenant();
      const agent = await createAgent(tenant.apiKey);
      await expectError(
        await putDraft(tenant.apiKey, agent.id, ifMatch, validArtifact()),
        400,
        "bad_request",
      );
      expect(await countRows("agent_drafts", tenant.tenantId)).toBe(0);
    },
  );

  it.each([
    ["an array", "[]"],
    ["null", "null"],
    ["a string", '"text"'],
    ["invalid JSON", "{"],
    ["a number JSON cannot keep", '{"n": 1e400}'],
  ])("refuses %s as a definition with 400 and stores nothing", async (_label, text) => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await expectError(await putDraft(tenant.apiKey, agent.id, '"0"', text), 400, "bad_request");
    expect(await countRows("agent_drafts", tenant.tenantId)).toBe(0);
  });

  it("requires application/json (415)", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const res = await api(`/v1/agents/${agent.id}/draft`, {
      method: "PUT",
      key: tenant.apiKey,
      headers: { "If-Match": '"0"', "Content-Type": "text/plain" },
      body: JSON.stringify(validArtifact()),
    });
    await expectError(res, 415, "unsupported_media_type");
    expect(await countRows("agent_drafts", tenant.tenantId)).toBe(0);
  });

  it("accepts a definition just under 256 KiB and refuses one over it with 413", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const big = validArtifact({ instructions: "x".repeat(90_000), greeting: "" });
    const padding = (size: number) => ({ ...big, notes: "y".repeat(size - JSON.stringify(big).length - 12) });
    const under = padding(256 * 1024 - 10);
    expect(JSON.stringify(under).length).toBeLessThanOrEqual(256 * 1024);
    expect((await saveDraft(tenant.apiKey, agent.id, 0, under)).revision).toBe(1);

    const over = padding(256 * 1024 + 10);
    expect(JSON.stringify(over).length).toBeGreaterThan(256 * 1024);
    await expectError(await putDraft(tenant.apiKey, agent.id, '"1"', over), 413, "payload_too_large");
    expect((await readDraft(tenant.apiKey, agent.id)).etag).toBe('"1"');
  });

  it("answers an unknown agent with 404 and stores nothing", async () => {
    const tenant = await createTenant();
    await expectError(await putDraft(tenant.apiKey, "agt_nothere", '"0"', validArtifact()), 404, "not_found");
    await expectError(await api("/v1/agents/agt_nothere/draft", { key: tenant.apiKey }), 404, "not_found");
    expect(await countRows("agent_drafts", tenant.tenantId)).toBe(0);
  });
});
