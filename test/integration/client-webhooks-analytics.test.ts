// The typed client's webhooks and analytics (what the console's screens call) against the real Worker: endpoint
// CRUD with the secret only on create and rotate, the delivery log, and analytics counting a turn by day and version.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AdminClient, AgentThreadsError, type FetchLike, OperatorClient } from "../../src/client/index";
import { listResponse } from "../../src/shared/api";
import { analyticsResponse } from "../../src/shared/sessions-api";
import { deliveryResponse, webhookResponse, webhookWithSecretResponse } from "../../src/shared/webhooks-api";
import { drainThread, threadStub } from "../helpers/projection";
import { unique, validArtifact } from "../helpers/tenants";

const baseUrl = "http://api.test";
const workerFetch: FetchLike = (input, init) => exports.default.fetch(input, init);

async function newTenant() {
  const operator = new OperatorClient({ baseUrl, fetch: workerFetch, operatorToken: env.OPERATOR_TOKEN });
  const tenant = await operator.createTenant(unique("client-hooks"));
  return { tenant, admin: new AdminClient({ baseUrl, fetch: workerFetch, apiKey: tenant.apiKey }) };
}

function caught(promise: Promise<unknown>): Promise<AgentThreadsError> {
  return promise.then(
    () => expect.fail("expected the call to fail"),
    (error: unknown) => {
      expect(error).toBeInstanceOf(AgentThreadsError);
      return error as AgentThreadsError;
    },
  );
}

describe("agent-threads/client: webhooks and analytics", () => {
  it("creates, reads, changes, rotates and deletes an endpoint; the secret is only in create and rotate", async () => {
    const { admin } = await newTenant();
    // `development` (this Worker's environment) admits a local receiver.
    const created = webhookWithSecretResponse.parse(
      await admin.webhooks.create({ url: "http://127.0.0.1:9/hooks", events: ["thread.created"] }),
    );
    expect(created.secret).toMatch(/^whsec_/);
    const listed = listResponse(webhookResponse).parse(await admin.webhooks.list());
    expect(listed.items.map((w) => w.id)).toEqual([created.id]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect(webhookResponse.parse(await admin.webhooks.get(created.id)).events).toEqual(["thread.created"]);

    const changed = await admin.webhooks.update(created.id, {
      events: ["run.succeeded", "run.failed"],
      description: "CRM",
    });
    expect(changed).toMatchObject({ events: ["run.succeeded", "run.failed"], description: "CRM" });
    expect((await admin.webhooks.update(created.id, { description: null })).description).toBeNull();

    const rotated = webhookWithSecretResponse.parse(await admin.webhooks.rotateSecret(created.id));
    expect(rotated.secret).not.toBe(created.secret);

    const log = listResponse(deliveryResponse).parse(
      await admin.webhooks.deliveries(created.id, { limit: 10 }),
    );
    expect(log.items).toEqual([]);
    const unknown = await caught(admin.webhooks.redeliver(created.id, "dlv_aaaaaaaaaaaaaaaaaaaaaaaaaa"));
    expect(unknown.status).toBe(404);

    const refused = await caught(
      admin.webhooks.create({ url: "http://10.0.0.1/hooks", events: ["run.failed"] }),
    );
    expect([refused.status, refused.details]).toMatchObject([400, [{ path: "url" }]]);

    await admin.webhooks.delete(created.id);
    expect((await caught(admin.webhooks.get(created.id))).status).toBe(404);
    expect((await admin.webhooks.list()).items).toEqual([]);
  });

  it("reads analytics by day and by version after a turn", async () => {
    const { tenant, admin } = await newTenant();
    const agent = await admin.agents.create({
      slug: unique("agent"),
      name: "Support",
      visibility: "private",
      allowedOrigins: [],
    });
    const saved = await admin.drafts.put(agent.id, validArtifact(), 0);
    await admin.versions.publish(agent.id, saved.revision);
    const release = await admin.releases.create(agent.id, {
      environment: "development",
      allocations: [{ version: 1, weight: 10_000 }],
    });
    await admin.releases.activate(agent.id, release.id);
    const launch = await admin.launch({ agentId: agent.id, subject: "user-1" });
    const res = await workerFetch(`${baseUrl}/v1/threads/${launch.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${launch.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ clientMessageId: "cm_analytics_1", text: "hello" }),
    });
    expect(res.status).toBe(201);
    await res.body?.cancel();
    await drainThread(await threadStub({ tenantId: tenant.tenantId, agentId: agent.id }, launch.threadId));

    const today = new Date().toISOString().slice(0, 10);
    const byDay = analyticsResponse.parse(await admin.analytics({ agentId: agent.id, groupBy: "day" }));
    expect(byDay).toMatchObject({ groupBy: "day", to: today, agentId: agent.id });
    expect(byDay.items).toMatchObject([{ key: today, threads: 1, turns: 1, failedTurns: 0 }]);
    const byVersion = analyticsResponse.parse(await admin.analytics({ agentId: agent.id }));
    expect(byVersion.items).toMatchObject([{ key: "1", version: 1, turns: 1 }]);
    const bad = await caught(admin.analytics({ from: "2026-02-30x" }));
    expect(bad.code).toBe("bad_request");
  });
});
