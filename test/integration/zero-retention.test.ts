// Zero retention (docs/privacy.md): D1 never receives message text, and the thread object blanks its text once idle.

import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { artifactSchema } from "../../src/control/artifact";
import { privateLaunchRequest } from "../helpers/edge-gate";
import { expectNothingLeft } from "../helpers/erasure-scan";
import { fakeOpenAICompatible } from "../helpers/fake-providers";
import { converse, drainThread, launchFor, threadEntries, threadStub } from "../helpers/projection";
import { api, expectError, json, validArtifact } from "../helpers/tenants";
import { inTestThread } from "../helpers/test-thread-agent";
import { clientMessageId, launchResponse, liveAgent } from "../helpers/threads";

afterEach(() => {
  vi.restoreAllMocks();
});

const MINUTE_MS = 60_000;
const SECRET = "my card number is 4111-1111";

async function zeroThread(idleMinutes = 5) {
  const agent = await liveAgent({
    agent: { visibility: "private" },
    artifact: {
      model: { provider: "local", model: "echo" },
      limits: { retention: { mode: "zero", idleMinutes } },
    },
  });
  const session = await launchFor(agent, "user-zero");
  await converse(session, [SECRET, "and my address is 12 Elm Street"]);
  const stub = await threadStub(agent, session.threadId);
  await drainThread(stub);
  return { agent, session, stub };
}

/** Every text column of D1's copy of one thread, read raw. */
async function d1Rows(tenantId: string, threadId: string) {
  const messages = await env.DB.prepare(
    "SELECT kind, role, content, tool_calls FROM agent_messages WHERE tenant_id = ? AND session_id = ? ORDER BY seq",
  )
    .bind(tenantId, threadId)
    .all();
  const session = await env.DB.prepare(
    "SELECT title, message_count FROM agent_sessions WHERE tenant_id = ? AND id = ?",
  )
    .bind(tenantId, threadId)
    .first();
  const usage = await env.DB.prepare(
    "SELECT SUM(input_tokens) AS input, SUM(output_tokens) AS output FROM agent_usage WHERE tenant_id = ? AND session_id = ?",
  )
    .bind(tenantId, threadId)
    .first();
  return { messages: messages.results, session, usage };
}

describe("zero retention", () => {
  it("projects metadata, counts and usage to D1 but no text, while the conversation works", async () => {
    const { agent, session, stub } = await zeroThread();
    // The model saw the text: the echo model answered with it, and the thread object holds it while active.
    const live = await threadEntries(stub);
    expect(live.map((e) => e.text)).toEqual([
      SECRET,
      `Echo: ${SECRET}`,
      "and my address is 12 Elm Street",
      "Echo: and my address is 12 Elm Street",
    ]);

    const rows = await d1Rows(agent.tenantId, session.threadId);
    expect(rows.messages).toHaveLength(4);
    for (const row of rows.messages)
      expect(row).toMatchObject({ kind: "message", content: "", tool_calls: null });
    expect(rows.session).toEqual({ title: null, message_count: 4 });
    expect(Number(rows.usage?.input)).toBeGreaterThan(0);
    expect(Number(rows.usage?.output)).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain("4111");
    expect(JSON.stringify(rows)).not.toContain("Elm");

    // The tenant's views show the counts, no text; export refuses.
    const messages = await api(`/v1/sessions/${session.threadId}/messages`, { key: agent.apiKey });
    const listed = z
      .object({ items: z.array(z.object({ content: z.string() })) })
      .parse(await messages.json());
    expect(listed.items.map((m) => m.content)).toEqual(["", "", "", ""]);
    await expectError(
      await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey }),
      409,
      "conflict",
    );
  });

  it("blanks the thread object's text idleMinutes after the last activity, keeping ids, tree and usage", async () => {
    const { agent, session, stub } = await zeroThread(5);
    const before = await threadEntries(stub);
    const schedules = await inTestThread(stub, (instance) => instance.getSchedules());
    expect(schedules.map((s) => s.callback)).toContain("purgeIdleText");

    // Four minutes idle: still active, nothing purged.
    await inTestThread(stub, async (instance) => {
      instance.clock.advance(4 * MINUTE_MS);
      await instance.purgeIdleText();
    });
    expect((await threadEntries(stub)).map((e) => e.text)).toEqual(before.map((e) => e.text));

    await inTestThread(stub, async (instance) => {
      instance.clock.advance(2 * MINUTE_MS);
      await instance.purgeIdleText();
    });
    const after = await threadEntries(stub);
    expect(after.map((e) => [e.id, e.parent_id, e.role])).toEqual(
      before.map((e) => [e.id, e.parent_id, e.role]),
    );
    expect(after.map((e) => e.text)).toEqual(["", "", "", ""]);
    const storage = await runInDurableObject(stub, (_instance, state) => {
      const dump: unknown[] = [];
      for (const table of [
        "entries",
        "tool_calls",
        "run_chunks",
        "queued_turns",
        "feedback",
        "thread_events",
        "outbox",
      ]) {
        dump.push(state.storage.sql.exec(`SELECT * FROM ${table}`).toArray());
      }
      const usage = state.storage.sql
        .exec("SELECT SUM(input_tokens) AS input, COUNT(*) AS turns FROM usage")
        .one();
      return { dump: JSON.stringify(dump), usage };
    });
    expect(storage.dump).not.toContain("4111");
    expect(storage.dump).not.toContain("Elm");
    expect(Number(storage.usage.input)).toBeGreaterThan(0);
    expect(Number(storage.usage.turns)).toBe(2);

    // History shows the entries as purged; the D1 counts and usage survive.
    const page = await exports.default.fetch(`http://api.test/v1/threads/${session.threadId}/entries`, {
      headers: { Authorization: `Bearer ${session.token}` },
    });
    expect(page.status).toBe(200);
    const items = z
      .object({ items: z.array(z.object({ text: z.string(), purged: z.boolean().optional() })) })
      .parse(await page.json()).items;
    expect(items).toHaveLength(4);
    for (const item of items) expect(item).toMatchObject({ text: "", purged: true });
    const rows = await d1Rows(agent.tenantId, session.threadId);
    expect(rows.session).toEqual({ title: null, message_count: 4 });
    expect(Number(rows.usage?.input)).toBeGreaterThan(0);

    // The audit cannot rebuild a purged run's input, and says so instead of answering one that fails its digest.
    const run = await env.DB.prepare(
      "SELECT id FROM agent_runs WHERE tenant_id = ? AND session_id = ? LIMIT 1",
    )
      .bind(agent.tenantId, session.threadId)
      .first<{ id: string }>();
    expect(run).not.toBeNull();
    const audit = await api(`/v1/sessions/${session.threadId}/runs/${run?.id}/input`, { key: agent.apiKey });
    expect((await expectError(audit, 404, "not_found")).message).toMatch(/zero retention/);

    // A later turn still works (the model sees only what remains) and the next idle period purges it too.
    await converse(session, ["a new question"]);
    expect((await threadEntries(stub)).at(-1)?.text).toBe("Echo: a new question");
  });

  it("clears the context variables at the idle purge, in D1's registry row and in the thread object", async () => {
    const MODEL_URL = "https://llm.example.com/v1";
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: {
        instructions: "Help {{name}} on the {{plan}} plan.",
        model: { provider: "openai-compatible", model: "gpt-fake", baseUrl: MODEL_URL },
        limits: { retention: { mode: "zero", idleMinutes: 5 } },
      },
    });
    const model = fakeOpenAICompatible([
      { kind: "text", deltas: ["Sure."] },
      { kind: "text", deltas: ["Again."] },
    ]);
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      if (url.startsWith(MODEL_URL)) return model.fetch(input, init);
      throw new Error(`unexpected outbound request to ${url}`);
    });
    const systemPrompts = () =>
      model.requests.map(
        (r) =>
          z.object({ messages: z.array(z.object({ role: z.string(), content: z.unknown() })) }).parse(r.body)
            .messages[0]?.content,
      );
    const name = `Zed${crypto.randomUUID().replaceAll("-", "")}`;
    const launched = await json(
      await privateLaunchRequest(agent.apiKey, {
        agentId: agent.agentId,
        subject: "user-context",
        context: { name, plan: "platinum" },
      }),
      201,
      launchResponse,
    );
    const send = async (text: string) => {
      const res = await api(`/v1/threads/${launched.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${launched.token}` },
        body: { clientMessageId: clientMessageId(), text },
      });
      expect(res.status).toBe(201);
    };
    await send("hello");
    expect(systemPrompts()[0]).toBe(`Help ${name} on the platinum plan.`);
    const stub = await threadStub(agent, launched.threadId);
    await drainThread(stub);
    const registry = () =>
      env.DB.prepare("SELECT context, context_version FROM threads WHERE tenant_id = ? AND id = ?")
        .bind(agent.tenantId, launched.threadId)
        .first();
    expect(JSON.stringify(await registry())).toContain(name);

    await inTestThread(stub, async (instance) => {
      instance.clock.advance(6 * MINUTE_MS);
      await instance.purgeIdleText();
    });
    expect(await registry()).toEqual({ context: null, context_version: 1 });
    // Nowhere in D1, the thread object (its tables and keys), or the tenant's events and quota objects.
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [name, "platinum"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: launched.threadId }],
    });
    // The next turn (with the same token) renders the instructions without the purged variables.
    await send("and again");
    expect(systemPrompts()[1]).toBe("Help  on the  plan.");
  });

  it("validates mode and idleMinutes in the artifact and in the served JSON Schema", async () => {
    const base = validArtifact();
    const parse = (retention: unknown) =>
      artifactSchema.safeParse({ ...base, limits: { retention } }).success;
    expect(parse({ mode: "zero" })).toBe(true);
    expect(parse({ mode: "zero", idleMinutes: 5 })).toBe(true);
    expect(parse({ mode: "zero", idleMinutes: 1440 })).toBe(true);
    expect(parse({ mode: "zero", idleMinutes: 4 })).toBe(false);
    expect(parse({ mode: "zero", idleMinutes: 1441 })).toBe(false);
    expect(parse({ mode: "forever" })).toBe(false);
    expect(parse({ idleMinutes: 30 })).toBe(false);

    const agent = await liveAgent();
    const saved = await api(`/v1/agents/${agent.agentId}/draft`, {
      method: "PUT",
      key: agent.apiKey,
      headers: { "If-Match": '"1"' },
      body: { ...base, limits: { retention: { mode: "zero", idleMinutes: 2 } } },
    });
    expect(saved.status).toBe(200);
    const published = await api(`/v1/agents/${agent.agentId}/versions`, {
      method: "POST",
      key: agent.apiKey,
      body: { draftRevision: 2 },
    });
    await expectError(published, 400, "bad_request");

    const schema = await (await exports.default.fetch("http://api.test/v1/schemas/artifact.json")).text();
    expect(schema).toContain('"zero"');
    expect(schema).toContain("idleMinutes");
  });
});
