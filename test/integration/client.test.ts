// `agent-threads/client` against the real Worker in workerd: the five-call lifecycle, launches, sessions, and every
// failure as one AgentThreadsError. Each answer is also parsed with the route's shared schema, so a client type that
// drifts from what the server sends fails here.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AdminClient,
  AgentThreadsError,
  type FetchLike,
  launchPublic,
  OperatorClient,
} from "../../src/client/index";
import { CURRENT_RUNTIME } from "../../src/control/runtime";
import {
  agentResponse,
  createdTenantResponse,
  draftResponse,
  listResponse,
  publishedVersionResponse,
  releaseResponse,
  runtimeResponse,
  versionResponse,
} from "../../src/shared/api";
import { launchResponse } from "../../src/shared/launch-api";
import { messageResponse, sessionResponse } from "../../src/shared/sessions-api";
import { D1DeploymentStore } from "../../src/storage/d1/d1-deployment-store";
import { drainThread, threadStub } from "../helpers/projection";
import { unique, validArtifact } from "../helpers/tenants";
import { connect } from "../helpers/threads";

const baseUrl = "http://api.test";
const ORIGIN = "https://shop.example.com";
const workerFetch: FetchLike = (input, init) => exports.default.fetch(input, init);

/** Every launch from its own client address, so the per-(key, IP) limiter never meets these tests. */
let ip = 0;
const fromFreshIp = () => ({ "CF-Connecting-IP": `198.51.100.${++ip}` });

async function newTenant() {
  const operator = new OperatorClient({ baseUrl, fetch: workerFetch, operatorToken: env.OPERATOR_TOKEN });
  const tenant = createdTenantResponse.parse(await operator.createTenant(unique("client")));
  return { tenant, admin: new AdminClient({ baseUrl, fetch: workerFetch, apiKey: tenant.apiKey }) };
}

/** Agent → draft → version → release → activate, each answer checked against its shared schema. */
async function releasedAgent(
  admin: AdminClient,
  options: { visibility: "public" | "private"; greeting?: string },
) {
  const agent = agentResponse.parse(
    await admin.agents.create({
      slug: unique("agent"),
      name: "Support",
      visibility: options.visibility,
      allowedOrigins: [ORIGIN],
    }),
  );
  const artifact = validArtifact(options.greeting !== undefined ? { greeting: options.greeting } : {});
  const saved = await admin.drafts.put(agent.id, artifact, 0);
  expect(saved).toEqual({ revision: 1 });
  const version = publishedVersionResponse.parse(await admin.versions.publish(agent.id, saved.revision));
  const release = releaseResponse.parse(
    await admin.releases.create(agent.id, {
      environment: "development",
      allocations: [{ version: version.version, weight: 10_000 }],
    }),
  );
  expect(release.active).toBe(false);
  const active = releaseResponse.parse(await admin.releases.activate(agent.id, release.id));
  expect(active.active).toBe(true);
  return { agent, version, release: active, artifact };
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

describe("agent-threads/client", () => {
  it("takes a new tenant from nothing to a launched thread that replies, and reads it back as a session", async () => {
    const { tenant, admin } = await newTenant();
    const { agent, version, release, artifact } = await releasedAgent(admin, { visibility: "public" });

    expect(version.version).toBe(1);
    expect(version.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(agentResponse.parse(await admin.agents.get(agent.id))).toEqual(agent);
    expect(
      listResponse(agentResponse)
        .parse(await admin.agents.list())
        .items.map((a) => a.id),
    ).toEqual([agent.id]);
    expect(draftResponse.parse(await admin.drafts.get(agent.id))).toMatchObject({
      revision: 1,
      definition: artifact,
    });
    expect(versionResponse.parse(await admin.versions.get(agent.id, 1)).artifact).toMatchObject(artifact);
    expect((await admin.versions.list(agent.id)).items.map((v) => v.version)).toEqual([1]);
    expect((await admin.releases.list(agent.id)).items.map((r) => [r.id, r.active])).toEqual([
      [release.id, true],
    ]);

    const session = launchResponse.parse(
      await launchPublic({
        baseUrl,
        fetch: workerFetch,
        agentKey: agent.publicKey,
        origin: ORIGIN,
        headers: fromFreshIp(),
      }),
    );
    expect(session.visitorToken).toBeDefined();
    expect(session.websocketUrl).toBe(`ws://api.test/v1/threads/${session.threadId}/ws`);

    const reader = await connect(session, { origin: ORIGIN });
    reader.send({
      type: "send",
      clientMessageId: `cm_${crypto.randomUUID().replace(/-/g, "")}`,
      text: "hello",
    });
    const ran = await reader.next("run", (f) => f.status === "succeeded");
    reader.ws.close();
    await drainThread(await threadStub({ tenantId: tenant.tenantId, agentId: agent.id }, session.threadId));
    if (ran.type !== "run") throw new Error("no run frame");
    const input = await admin.sessions.runInput(session.threadId, ran.runId);
    expect(input).toMatchObject({ runId: ran.runId, promptBuilder: "pb1", verified: true, step: 0 });
    // One model call: asking for it by number answers the same record.
    expect(await admin.sessions.runInput(session.threadId, ran.runId, { step: 0 })).toEqual(input);

    const listed = listResponse(sessionResponse).parse(await admin.sessions.list({ agentId: agent.id }));
    expect(listed.items.map((s) => s.threadId)).toEqual([session.threadId]);
    // By subject, the same list comes through the search body, never a URL.
    const subject = listed.items[0]?.subject ?? "";
    const bySubject = await admin.sessions.search({ subject });
    expect(bySubject.items).toEqual(listed.items);
    expect((await admin.sessions.search({ subject: `${subject}-other` })).items).toEqual([]);
    expect(sessionResponse.parse(await admin.sessions.get(session.threadId)).messageCount).toBe(2);
    const messages = listResponse(messageResponse).parse(await admin.sessions.messages(session.threadId));
    expect(messages.items.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(messages.items[0]?.content).toBe("hello");
    expect(messages.items[1]).toMatchObject({ runId: ran.runId, version: 1, inputDigest: input.inputDigest });

    // v2 published (not released): the tenant moves this thread to it.
    const draft = await admin.drafts.get(agent.id);
    const saved = await admin.drafts.put(agent.id, { ...artifact, instructions: "Now v2." }, draft.revision);
    expect((await admin.versions.publish(agent.id, saved.revision)).version).toBe(2);
    expect(await admin.sessions.upgrade(session.threadId, 2)).toMatchObject({
      threadId: session.threadId,
      fromVersion: 1,
      toVersion: 2,
    });

    expect((await admin.usage({ agentId: agent.id })).totals.runs).toBe(1);

    await admin.sessions.delete(session.threadId);
    expect((await caught(admin.sessions.get(session.threadId))).status).toBe(404);
  });

  it("launches a private agent for a subject with context the greeting is filled from", async () => {
    const { admin } = await newTenant();
    const { agent } = await releasedAgent(admin, { visibility: "private", greeting: "Hello {{name}}!" });

    const session = launchResponse.parse(
      await admin.launch({ agentId: agent.id, subject: "user-42", context: { name: "Ada", plan: "pro" } }),
    );
    expect(session.visitorToken).toBeUndefined();
    expect(session.presentation?.greeting).toBe("Hello Ada!");

    const again = await admin.launch({
      agentKey: agent.publicKey,
      subject: "user-42",
      threadId: session.threadId,
      context: { name: "Grace" },
    });
    expect(again.threadId).toBe(session.threadId);
    expect(again.presentation?.greeting).toBe("Hello Grace!");

    // Another subject cannot resume it: the same 404 as a thread that does not exist.
    const foreign = await caught(
      admin.launch({ agentId: agent.id, subject: "user-7", threadId: session.threadId }),
    );
    expect([foreign.status, foreign.code]).toEqual([404, "not_found"]);
  });

  it("issues and revokes API keys and keeps secrets write-only", async () => {
    const { admin } = await newTenant();
    const created = await admin.apiKeys.create({ name: "CI", scope: "read" });
    expect(created.apiKey.startsWith("sk_")).toBe(true);
    const reader = new AdminClient({ baseUrl, fetch: workerFetch, apiKey: created.apiKey });
    expect((await reader.agents.list()).items).toEqual([]);
    const refused = await caught(reader.secrets.put("openai", "sk-live"));
    expect([refused.status, refused.code]).toEqual([403, "forbidden"]);
    expect((await admin.apiKeys.list()).items.map((k) => k.name).sort()).toEqual(["CI", "Initial admin key"]);
    await admin.apiKeys.revoke(created.id);
    expect((await admin.apiKeys.get(created.id)).revokedAt).not.toBeNull();
    expect((await caught(reader.agents.list())).code).toBe("unauthenticated");

    await admin.secrets.put("openai", "sk-live-value");
    const secrets = await admin.secrets.list();
    expect(secrets.items.map((s) => s.alias)).toEqual(["openai"]);
    expect(JSON.stringify(secrets)).not.toContain("sk-live-value");
    await admin.secrets.delete("openai");
    expect((await caught(admin.secrets.delete("openai"))).code).toBe("not_found");
  });

  it("turns a stale draft revision into precondition_failed and saves nothing", async () => {
    const { admin } = await newTenant();
    const agent = await admin.agents.create({
      slug: unique("agent"),
      name: "Support",
      visibility: "public",
      allowedOrigins: [ORIGIN],
    });
    await admin.drafts.put(agent.id, validArtifact({ name: "First" }), 0);

    const stale = await caught(admin.drafts.put(agent.id, validArtifact({ name: "Second" }), 0));
    expect(stale.status).toBe(412);
    expect(stale.code).toBe("precondition_failed");
    expect(stale.requestId).toMatch(/\S/);
    expect(stale.message).not.toBe("");
    expect((await admin.drafts.get(agent.id)).definition).toMatchObject({ name: "First" });
    expect(await admin.drafts.put(agent.id, validArtifact({ name: "Second" }), 1)).toEqual({ revision: 2 });
  });

  it("answers other tenants' agents and unknown ids as not_found, bad input with its fields", async () => {
    const { admin } = await newTenant();
    const { admin: other } = await newTenant();
    const theirs = await other.agents.create({
      slug: unique("agent"),
      name: "Theirs",
      visibility: "public",
      allowedOrigins: [ORIGIN],
    });

    // One call at a time: a rejection made before its turn to be awaited would be reported as unhandled.
    for (const call of [
      () => admin.agents.get(theirs.id),
      () => admin.agents.get("agt_nope"),
      () => admin.drafts.get(theirs.id),
    ]) {
      const error = await caught(call());
      expect([error.status, error.code]).toEqual([404, "not_found"]);
    }

    const invalid = await caught(
      admin.agents.create({ slug: "Not A Slug", name: "x", visibility: "public", allowedOrigins: [] }),
    );
    expect([invalid.status, invalid.code]).toEqual([400, "bad_request"]);
    expect(
      z
        .array(z.object({ path: z.string() }))
        .parse(invalid.details)
        .map((d) => d.path),
    ).toContain("slug");
    expect((await admin.agents.list()).items).toEqual([]);

    const key = await caught(
      new AdminClient({ baseUrl, fetch: workerFetch, apiKey: "sk_not_a_key" }).agents.list(),
    );
    expect([key.status, key.code]).toEqual([401, "unauthenticated"]);
  });

  it("carries the reason of a launch the agent cannot serve yet", async () => {
    const { admin } = await newTenant();
    const agent = await admin.agents.create({
      slug: unique("agent"),
      name: "Unreleased",
      visibility: "public",
      allowedOrigins: [ORIGIN],
    });
    const error = await caught(
      launchPublic({
        baseUrl,
        fetch: workerFetch,
        agentKey: agent.publicKey,
        origin: ORIGIN,
        headers: fromFreshIp(),
      }),
    );
    expect([error.status, error.code, error.reason]).toEqual([409, "conflict", "no_active_release"]);

    const noOrigin = await caught(
      launchPublic({ baseUrl, fetch: workerFetch, agentKey: agent.publicKey, headers: fromFreshIp() }),
    );
    expect([noOrigin.status, noOrigin.code]).toEqual([403, "forbidden"]);
  });

  it("reads the runtime revision and carries runtime_incompatible from a release on an older one", async () => {
    const { admin } = await newTenant();
    const runtime = runtimeResponse.parse(await admin.runtime());
    expect(runtime).toEqual({ id: CURRENT_RUNTIME.id, capabilities: CURRENT_RUNTIME.capabilities });
    const older = unique("runtime-old");
    await new D1DeploymentStore(env.DB).registerRuntime({
      id: older,
      supportedSchemaVersions: [1],
      capabilities: ["tools.server"],
    });
    const agent = await admin.agents.create({
      slug: unique("agent"),
      name: "Picker",
      visibility: "private",
      allowedOrigins: [],
    });
    const tools = [{ name: "pick_color", description: "Asks the page.", executor: "client" }];
    const saved = await admin.drafts.put(agent.id, validArtifact({ tools }), 0);
    const version = await admin.versions.publish(agent.id, saved.revision);
    const allocations = [{ version: version.version, weight: 10_000 }];
    const error = await caught(
      admin.releases.create(agent.id, { environment: "development", allocations, runtimeRevisionId: older }),
    );
    expect([error.status, error.code, error.reason]).toEqual([409, "conflict", "runtime_incompatible"]);
    const release = releaseResponse.parse(
      await admin.releases.create(agent.id, {
        environment: "development",
        allocations,
        runtimeRevisionId: runtime.id,
      }),
    );
    expect(release.runtimeRevision).toBe(runtime.id);
  });

  it("reads Retry-After, answers without an API body by status, and names a server that is not there", async () => {
    const limited: FetchLike = async () =>
      new Response(
        JSON.stringify({ error: { code: "rate_limited", message: "Slow down.", requestId: "req_1" } }),
        { status: 429, headers: { "Retry-After": "7", "Content-Type": "application/json" } },
      );
    const error = await caught(new AdminClient({ baseUrl, fetch: limited, apiKey: "sk_x" }).usage());
    expect([error.status, error.code, error.retryAfter, error.requestId]).toEqual([
      429,
      "rate_limited",
      7,
      "req_1",
    ]);

    const gateway: FetchLike = async () => new Response("<html>Bad gateway</html>", { status: 502 });
    const proxied = await caught(new AdminClient({ baseUrl, fetch: gateway, apiKey: "sk_x" }).agents.list());
    expect([proxied.status, proxied.code]).toEqual([502, "upstream_unavailable"]);

    const down: FetchLike = async () => {
      throw new TypeError("fetch failed");
    };
    const unreachable = await caught(new AdminClient({ baseUrl, fetch: down, apiKey: "sk_x" }).agents.list());
    expect([unreachable.status, unreachable.code]).toEqual([0, "upstream_unavailable"]);
  });
});

describe("admin.subjects", () => {
  it("holds, erases and checks a subject with the subject only in request bodies, never in a URL", async () => {
    const urls: string[] = [];
    const recording: FetchLike = (input, init) => {
      urls.push(new Request(input, init).url);
      return workerFetch(input, init);
    };
    const { tenant } = await newTenant();
    const admin = new AdminClient({ baseUrl, fetch: recording, apiKey: tenant.apiKey });
    const { agent } = await releasedAgent(admin, { visibility: "private" });
    const subject = `user-${crypto.randomUUID()}`;
    const session = launchResponse.parse(await admin.launch({ agentId: agent.id, subject }));

    expect(await admin.subjects.hold(subject, "Case 12")).toMatchObject({
      scope: "subject",
      target: subject,
    });
    const held = await caught(admin.subjects.erase(subject));
    expect([held.status, held.code, held.reason]).toEqual([409, "conflict", "legal_hold"]);
    await admin.subjects.releaseHold(subject);
    const missing = await caught(admin.subjects.releaseHold(subject));
    expect([missing.status, missing.code]).toEqual([404, "not_found"]);

    const done = await admin.subjects.eraseAll(subject);
    expect(done.threadIds).toEqual([session.threadId]);
    const { key } = await admin.subjects.digestKey();
    const hmac = await crypto.subtle.importKey(
      "raw",
      Uint8Array.from(atob(key.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(subject)));
    const digest = btoa(String.fromCharCode(...mac))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect(done.subjectDigest).toBe(digest);
    expect((await admin.subjects.erasure(done.id)).status).toBe("completed");

    expect(urls.length).toBeGreaterThan(5);
    for (const url of urls) expect(url).not.toContain(subject);
  });
});
