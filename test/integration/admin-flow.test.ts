import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agentResponse,
  createdTenantResponse,
  listResponse,
  publishedVersionResponse,
  releaseResponse,
} from "../../src/shared/api";
import {
  api,
  createTenant,
  expectError,
  json,
  operatorHeaders,
  unique,
  validArtifact,
} from "../helpers/tenants";

describe("from a new tenant to an active 50/50 release", () => {
  it("runs the whole admin flow, and another tenant sees none of it", async () => {
    const created = await api("/v1/operator/tenants", {
      method: "POST",
      headers: operatorHeaders(),
      body: { name: unique("Acme") },
    });
    const { apiKey: key } = await json(created, 201, createdTenantResponse);

    const agent = await json(
      await api("/v1/agents", {
        method: "POST",
        key,
        body: {
          slug: "support",
          name: "Support",
          visibility: "public",
          allowedOrigins: ["https://acme.example"],
        },
      }),
      201,
      agentResponse,
    );

    const draft1 = await api(`/v1/agents/${agent.id}/draft`, {
      method: "PUT",
      key,
      headers: { "If-Match": '"0"' },
      body: validArtifact({ instructions: "Be kind." }),
    });
    expect(draft1.status).toBe(200);
    const etag1 = draft1.headers.get("ETag")!;
    const { revision: rev1 } = z.object({ revision: z.number() }).parse(await draft1.json());

    const v1 = await json(
      await api(`/v1/agents/${agent.id}/versions`, { method: "POST", key, body: { draftRevision: rev1 } }),
      201,
      publishedVersionResponse,
    );
    expect(v1.version).toBe(1);

    const draft2 = await api(`/v1/agents/${agent.id}/draft`, {
      method: "PUT",
      key,
      headers: { "If-Match": etag1 },
      body: validArtifact({ instructions: "Be kind and brief." }),
    });
    const { revision: rev2 } = z.object({ revision: z.number() }).parse(await draft2.json());
    expect(rev2).toBe(rev1 + 1);

    const v2 = await json(
      await api(`/v1/agents/${agent.id}/versions`, { method: "POST", key, body: { draftRevision: rev2 } }),
      201,
      publishedVersionResponse,
    );
    expect(v2.version).toBe(2);

    const release = await json(
      await api(`/v1/agents/${agent.id}/releases`, {
        method: "POST",
        key,
        body: {
          environment: "development",
          allocations: [
            { version: 1, weight: 5000 },
            { version: 2, weight: 5000 },
          ],
        },
      }),
      201,
      releaseResponse,
    );
    const activated = await json(
      await api(`/v1/agents/${agent.id}/releases/${release.id}/activate`, { method: "POST", key }),
      200,
      releaseResponse,
    );
    expect(activated.active).toBe(true);

    const list = await json(
      await api(`/v1/agents/${agent.id}/releases`, { key }),
      200,
      listResponse(releaseResponse),
    );
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({
      id: release.id,
      environment: "development",
      active: true,
      allocations: [
        { version: 1, versionId: v1.versionId, weight: 5000 },
        { version: 2, versionId: v2.versionId, weight: 5000 },
      ],
    });

    const stranger = await createTenant();
    await expectError(await api(`/v1/agents/${agent.id}`, { key: stranger.apiKey }), 404, "not_found");
    await expectError(
      await api(`/v1/agents/${agent.id}/releases`, { key: stranger.apiKey }),
      404,
      "not_found",
    );
  });
});
