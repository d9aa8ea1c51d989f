// A turn that calls an agent tool: a signed webhook goes out, and no tenant secret it echoes is ever stored.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantRunQuota } from "../../src/auth/run-quota";
import { type Artifact, artifactSchema } from "../../src/control/artifact";
import { digestOf } from "../../src/control/canonical-json";
import type { ServerFrame } from "../../src/shared/protocol";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import { ThreadRuntime } from "../../src/thread/conversation/thread-runtime";
import { verifyWebhook } from "../../src/tools/webhook-signature";
import { api, createTenant } from "../helpers/tenants";

const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** One turn of `binding`'s thread in this object's storage, its tools called through `fetch`; the frames it sent. */
async function oneTurn(
  storage: DurableObjectStorage,
  binding: ThreadBinding,
  fetch: typeof globalThis.fetch,
  clientMessageId: string,
): Promise<ServerFrame[]> {
  const frames: ServerFrame[] = [];
  const runtime = new ThreadRuntime({
    storage,
    env,
    binding,
    now: Date.now,
    peers: () => [{ id: "test", send: (frame) => frames.push(frame) }],
    keepAliveWhile: (fn) => fn(),
    afterTurn: async () => {},
    fetch,
    quota: tenantRunQuota(env, binding),
  });
  const accepted = await runtime.accept({ kind: "send", subject: "vis_alice", clientMessageId, text: "go" });
  expect(accepted.ok).toBe(true);
  if (accepted.ok) await runtime.settled(accepted.value.run.id);
  return frames;
}

async function bindingFor(tenantId: string, artifact: Artifact): Promise<ThreadBinding> {
  return {
    tenantId,
    environment: "development",
    agentId: "agt_tools",
    threadId: `thr_${crypto.randomUUID().replace(/-/g, "")}`,
    versionId: "ver_tools",
    version: 1,
    digest: await digestOf(artifact),
    artifact,
    boundAt: Date.now(),
  };
}

describe("tool calls in a turn", () => {
  it("signs the webhook, injects identity, and stores the echoed secret as [REDACTED]", async () => {
    const tenant = await createTenant();
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: tenant.apiKey,
      body: { value: SIGNING_SECRET },
    });
    expect(put.status).toBe(204);
    const artifact = artifactSchema.parse({
      schemaVersion: 1,
      name: "Tools",
      instructions: "Use the lookup tool.",
      model: {
        provider: "local",
        model: "echo",
        local: { toolCall: { name: "lookup", input: { userId: "mallory" } } },
      },
      tools: [
        {
          name: "lookup",
          description: "Looks things up.",
          url: "https://hooks.example.com/lookup",
          signingSecret: "hook-signing",
        },
      ],
    });
    const binding = await bindingFor(tenant.tenantId, artifact);
    const requests: { headers: Headers; body: string }[] = [];
    const fakeFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      requests.push({ headers: request.headers, body: await request.text() });
      return Response.json({ answer: `the secret is ${SIGNING_SECRET}` });
    }) as typeof fetch;

    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const { frames, toolOutput } = await runInDurableObject(stub, async (_instance, state) => {
      const frames = await oneTurn(state.storage, binding, fakeFetch, "cm_tools_1");
      const toolOutput = state.storage.sql
        .exec("SELECT output_json FROM tool_calls")
        .toArray()[0]?.output_json;
      return { frames, toolOutput: String(toolOutput) };
    });

    expect(requests).toHaveLength(1);
    const sent = requests[0]!;
    const verified = await verifyWebhook({
      secret: SIGNING_SECRET,
      headers: {
        "webhook-id": sent.headers.get("webhook-id") ?? "",
        "webhook-timestamp": sent.headers.get("webhook-timestamp") ?? "",
        "webhook-signature": sent.headers.get("webhook-signature") ?? "",
      },
      body: sent.body,
      now: Date.now(),
    });
    expect(verified.ok).toBe(true);
    const body = JSON.parse(sent.body) as {
      input: Record<string, unknown>;
      context: Record<string, unknown>;
    };
    expect(body.context).toMatchObject({
      tenantId: tenant.tenantId,
      threadId: binding.threadId,
      subject: "vis_alice",
    });
    expect(body.input.userId).not.toBe("mallory");

    expect(toolOutput).toContain("[REDACTED]");
    expect(toolOutput).not.toContain(SIGNING_SECRET);
    const reply = frames.find((f) => f.type === "entry" && f.entry.role === "assistant");
    expect(reply?.type === "entry" && reply.entry.text).not.toContain(SIGNING_SECRET);
    expect(frames.some((f) => f.type === "run" && f.status === "succeeded")).toBe(true);
  });
});

describe("several tool calls in one step (the local model's toolCalls)", () => {
  it("sends each call to its webhook with its own id, and the reply says what each returned", async () => {
    const tenant = await createTenant();
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: tenant.apiKey,
      body: { value: SIGNING_SECRET },
    });
    expect(put.status).toBe(204);
    const tool = (name: string) => ({
      name,
      description: `The ${name} tool.`,
      url: `https://hooks.example.com/${name}`,
      signingSecret: "hook-signing",
    });
    const artifact = artifactSchema.parse({
      schemaVersion: 1,
      name: "Tools",
      instructions: "Use both tools.",
      model: {
        provider: "local",
        model: "echo",
        local: {
          toolCalls: [
            { name: "lookup", input: { q: "order" } },
            { name: "refund", input: { amount: 5 } },
          ],
        },
      },
      tools: [tool("lookup"), tool("refund")],
    });
    const binding = await bindingFor(tenant.tenantId, artifact);
    const requests: { url: string; body: { tool: string; toolCallId: string } }[] = [];
    const fakeFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const body = (await request.json()) as { tool: string; toolCallId: string };
      requests.push({ url: request.url, body });
      return Response.json({ done: body.tool });
    }) as typeof fetch;

    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const frames = await runInDurableObject(stub, (_instance, state) =>
      oneTurn(state.storage, binding, fakeFetch, "cm_tools_2"),
    );

    expect(requests.map((r) => [r.url, r.body.tool])).toEqual([
      ["https://hooks.example.com/lookup", "lookup"],
      ["https://hooks.example.com/refund", "refund"],
    ]);
    expect(new Set(requests.map((r) => r.body.toolCallId)).size).toBe(2);
    const reply = frames.find((f) => f.type === "entry" && f.entry.role === "assistant");
    expect(reply?.type === "entry" && reply.entry.text).toBe(
      'The lookup tool returned: {"done":"lookup"}\nThe refund tool returned: {"done":"refund"}',
    );
  });
});

describe("tools pointing at the platform itself", () => {
  it("are refused when the draft is published, naming the tool's url, and no version is written", async () => {
    const tenant = await createTenant();
    const agentRes = await api("/v1/agents", {
      method: "POST",
      key: tenant.apiKey,
      body: {
        slug: "self-hook",
        name: "Self",
        visibility: "public",
        allowedOrigins: ["https://shop.example.com"],
      },
    });
    const agent = (await agentRes.json()) as { id: string };
    const draft = await api(`/v1/agents/${agent.id}/draft`, {
      method: "PUT",
      key: tenant.apiKey,
      headers: { "If-Match": '"0"' },
      body: {
        schemaVersion: 1,
        name: "Self",
        instructions: "x",
        model: { provider: "local", model: "echo" },
        tools: [{ name: "self", description: "d", url: "https://api.test/v1/health", signingSecret: "s" }],
      },
    });
    expect(draft.status).toBe(200);
    const published = await api(`/v1/agents/${agent.id}/versions`, {
      method: "POST",
      key: tenant.apiKey,
      body: { draftRevision: 1 },
    });
    expect(published.status).toBe(400);
    const error = (await published.json()) as { error: { details: { path: string }[] } };
    expect(error.error.details.map((d) => d.path)).toEqual(["tools.0.url"]);
    const versions = await env.DB.prepare("SELECT COUNT(*) AS n FROM agent_versions WHERE tenant_id = ?")
      .bind(tenant.tenantId)
      .first<{ n: number }>();
    expect(versions?.n).toBe(0);
  });
});
