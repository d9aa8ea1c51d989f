// The platform's own host and private endpoints: a tool or model URL aimed at them is refused when a version is
// published and blocked at call time with no request made, also when PUBLIC_HOSTS is empty.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { tenantRunQuota } from "../../src/auth/run-quota";
import { type Artifact, artifactSchema } from "../../src/control/artifact";
import { digestOf } from "../../src/control/canonical-json";
import type { ServerFrame } from "../../src/shared/protocol";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import type { RequestMeta } from "../../src/thread/contract";
import { ThreadRuntime } from "../../src/thread/conversation/thread-runtime";
import { fetchWithEnv } from "../helpers/edge-gate";
import {
  API,
  api,
  countRows,
  createAgent,
  createTenant,
  expectError,
  fieldPaths,
  json,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";
import { clientMessageId, launch, liveAgent, ORIGIN } from "../helpers/threads";

const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/** The host a turn's request reached the platform on, when it differs from the admin API's (`api.test`). */
const THREAD_HOST = "threads.example.test";

afterEach(() => {
  vi.restoreAllMocks();
});

function openAiModel(baseUrl: string) {
  return { provider: "openai-compatible", model: "m", baseUrl };
}

async function publishVia(
  apiKey: string,
  agentId: string,
  overrides: Partial<Record<keyof Env, string>> = {},
): Promise<Response> {
  return fetchWithEnv(overrides, `/v1/agents/${agentId}/versions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ draftRevision: 1 }),
  });
}

async function draftedAgent(model: Record<string, unknown>) {
  const tenant = await createTenant();
  const agent = await createAgent(tenant.apiKey);
  await saveDraft(tenant.apiKey, agent.id, 0, validArtifact({ model }));
  return { tenant, agent };
}

describe("a model baseUrl at publish time", () => {
  it("refuses local plain http outside development (400 model.baseUrl, no version); development admits it", async () => {
    const { tenant, agent } = await draftedAgent(openAiModel("http://127.0.0.1:11434/v1"));
    for (const ENVIRONMENT of ["production", "staging"]) {
      const error = await expectError(
        await publishVia(tenant.apiKey, agent.id, { ENVIRONMENT }),
        400,
        "bad_request",
      );
      expect(fieldPaths(error)).toEqual(["model.baseUrl"]);
    }
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
    expect((await publishVia(tenant.apiKey, agent.id)).status).toBe(201);
  });

  it.each([
    "http://llm.example.com/v1",
    "https://127.0.0.1/v1",
    "https://169.254.169.254/latest",
    "https://[::1]/v1",
    "https://10.0.0.5/v1",
  ])("refuses %s in every environment, storing no version", async (baseUrl) => {
    const { tenant, agent } = await draftedAgent(openAiModel(baseUrl));
    for (const ENVIRONMENT of ["development", "production"]) {
      const error = await expectError(
        await publishVia(tenant.apiKey, agent.id, { ENVIRONMENT }),
        400,
        "bad_request",
      );
      expect(fieldPaths(error)).toEqual(["model.baseUrl"]);
    }
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });

  it("refuses the platform's own host: the request's and the configured PUBLIC_HOSTS", async () => {
    const own = await draftedAgent(openAiModel(`https://${new URL(API).host}/v1`));
    const ownError = await expectError(await publishVia(own.tenant.apiKey, own.agent.id), 400, "bad_request");
    expect(ownError.details).toEqual([{ path: "model.baseUrl", message: "must not point to this platform" }]);

    const configured = await draftedAgent(openAiModel("https://eu.agents.example.com/v1"));
    const configuredError = await expectError(
      await publishVia(configured.tenant.apiKey, configured.agent.id, { PUBLIC_HOSTS: "agents.example.com" }),
      400,
      "bad_request",
    );
    expect(fieldPaths(configuredError)).toEqual(["model.baseUrl"]);
    expect(await countRows("agent_versions", configured.tenant.tenantId)).toBe(0);
  });
});

describe("a tool url at publish time", () => {
  const loopbackTool = (url: string) => ({
    tools: [{ name: "lookup", description: "Looks things up.", url, signingSecret: "hook-signing" }],
  });

  it("admits a local plain-http tool in development only; staging and production refuse it (400 tools.0.url)", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    // A provider model, so the tool's URL is the only thing staging and production refuse (the local model is
    // refused there too, by its own rule).
    await saveDraft(
      tenant.apiKey,
      agent.id,
      0,
      validArtifact({
        model: openAiModel("https://llm.example.com/v1"),
        ...loopbackTool("http://127.0.0.1:8788/tool"),
      }),
    );
    for (const ENVIRONMENT of ["production", "staging"]) {
      const error = await expectError(
        await publishVia(tenant.apiKey, agent.id, { ENVIRONMENT }),
        400,
        "bad_request",
      );
      expect(fieldPaths(error)).toEqual(["tools.0.url"]);
    }
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
    expect((await publishVia(tenant.apiKey, agent.id, { ENVIRONMENT: "development" })).status).toBe(201);
  });

  it("refuses plain http to any other host in development too", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact(loopbackTool("http://10.0.0.5:8080/tool")));
    const error = await expectError(await publishVia(tenant.apiKey, agent.id), 400, "bad_request");
    expect(fieldPaths(error)).toEqual(["tools.0.url"]);
  });
});

async function bindingFor(tenantId: string, artifact: Artifact): Promise<ThreadBinding> {
  return {
    tenantId,
    environment: "development",
    agentId: "agt_platform",
    threadId: `thr_${crypto.randomUUID().replace(/-/g, "")}`,
    versionId: "ver_platform",
    version: 1,
    digest: await digestOf(artifact),
    artifact,
    boundAt: Date.now(),
  };
}

async function tenantWithSigningSecret() {
  const tenant = await createTenant();
  const put = await api("/v1/secrets/hook-signing", {
    method: "PUT",
    key: tenant.apiKey,
    body: { value: SIGNING_SECRET },
  });
  expect(put.status).toBe(204);
  return tenant;
}

const toolArtifact = (url: string) =>
  artifactSchema.parse({
    schemaVersion: 1,
    name: "Tools",
    instructions: "Use the lookup tool.",
    model: { provider: "local", model: "echo", local: { toolCall: { name: "lookup", input: {} } } },
    tools: [{ name: "lookup", description: "Looks things up.", url, signingSecret: "hook-signing" }],
  });

/** One turn of `binding` in a fresh object, started by a request that reached the platform as `meta.host`. */
async function turnVia(binding: ThreadBinding, meta: RequestMeta, fetch: typeof globalThis.fetch) {
  const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
  return runInDurableObject(stub, async (_instance, state) => {
    const frames: ServerFrame[] = [];
    const runtime = new ThreadRuntime({
      storage: state.storage,
      env,
      binding,
      now: Date.now,
      peers: () => [{ id: "test", send: (frame) => frames.push(frame) }],
      keepAliveWhile: (fn) => fn(),
      afterTurn: async () => {},
      fetch,
      quota: tenantRunQuota(env, binding),
    });
    const accepted = await runtime.accept({
      kind: "send",
      subject: "vis_alice",
      clientMessageId: clientMessageId(),
      text: "go",
      meta,
    });
    if (!accepted.ok) throw new Error(accepted.message);
    const run = await runtime.settled(accepted.value.run.id);
    const toolCalls = state.storage.sql.exec("SELECT status FROM tool_calls").toArray();
    return { run, frames, toolStatuses: toolCalls.map((row) => String(row.status)) };
  });
}

describe("the platform's host at call time, with PUBLIC_HOSTS empty", () => {
  it("blocks a tool aimed at the host the turn's request came in on, sending nothing", async () => {
    expect(env.PUBLIC_HOSTS).toBe("");
    const tenant = await tenantWithSigningSecret();
    const binding = await bindingFor(tenant.tenantId, toolArtifact(`https://${THREAD_HOST}/v1/health`));
    const sent: string[] = [];
    const fakeFetch = (async (input: RequestInfo | URL) => {
      sent.push(String(input instanceof Request ? input.url : input));
      return Response.json({ ok: true });
    }) as typeof fetch;
    const { run, toolStatuses } = await turnVia(
      binding,
      { requestId: "req-1", host: THREAD_HOST },
      fakeFetch,
    );
    expect(sent).toEqual([]);
    expect(toolStatuses).toEqual(["blocked"]);
    expect(run?.status).toBe("succeeded");
  });

  it("fails the turn (bad_request) for a model endpoint on that host, with no request made", async () => {
    const tenant = await createTenant();
    const artifact = artifactSchema.parse(validArtifact({ model: openAiModel(`https://${THREAD_HOST}/v1`) }));
    const binding = await bindingFor(tenant.tenantId, artifact);
    const outbound = interceptHost(THREAD_HOST);
    const { run } = await turnVia(binding, { requestId: "req-2", host: THREAD_HOST }, fetch);
    expect(outbound.hostCalls()).toEqual([]);
    expect(run).toMatchObject({ status: "failed", error: { code: "bad_request" } });
  });

  it("learns the host from the Worker: a message posted on another host blocks a tool aimed at it", async () => {
    const agent = await liveAgent({ artifact: toolArtifact(`https://${THREAD_HOST}/hook`) });
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: SIGNING_SECRET },
    });
    expect(put.status).toBe(204);
    const session = await launch(agent.publicKey);
    const outbound = interceptHost(THREAD_HOST);
    const res = await exports.default.fetch(
      `https://${THREAD_HOST}/v1/threads/${session.threadId}/messages`,
      {
        method: "POST",
        headers: {
          Authorization: `Bearer ${session.token}`,
          "Content-Type": "application/json",
          Origin: ORIGIN,
        },
        body: JSON.stringify({ clientMessageId: clientMessageId(), text: "look it up" }),
      },
    );
    const reply = await json(res, 201, z.object({ run: z.object({ status: z.string() }) }));
    expect(reply.run.status).toBe("succeeded");
    expect(outbound.hostCalls()).toEqual([]);
  });
});

/** Answers every outbound fetch to `host` itself (recording it) and passes the rest through. */
function interceptHost(host: string) {
  const original = globalThis.fetch;
  const calls: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (new URL(url).host !== host) return original(input, init);
    calls.push(url);
    return Promise.resolve(Response.json({ ok: true }));
  });
  return { hostCalls: () => calls };
}
