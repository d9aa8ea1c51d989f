// GET /v1/sessions[/:threadId[/messages]]: tenant-scoped reads of the projection, filters, and tamper-proof cursors.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { messageResponse, sessionResponse } from "../../src/shared/sessions-api";
import {
  converse,
  drainThread,
  launchFor,
  secondAgent,
  threadEntries,
  threadStub,
} from "../helpers/projection";
import { api, createApiKey, expectError, json } from "../helpers/tenants";
import { type LiveAgent, liveAgent } from "../helpers/threads";

const sessionList = z.object({ items: z.array(sessionResponse), nextCursor: z.string().optional() });
const messageList = z.object({ items: z.array(messageResponse), nextCursor: z.string().optional() });

/** A projected thread: launched for `subject`, one turn per text, drained into D1. */
async function projectedThread(agent: LiveAgent, subject: string, texts: string[]) {
  const session = await launchFor(agent, subject);
  await converse(session, texts);
  const stub = await threadStub(agent, session.threadId);
  await drainThread(stub);
  return { ...session, stub };
}

async function list(key: string, query = "") {
  return json(await api(`/v1/sessions${query}`, { key }), 200, sessionList);
}

/** The list by filters that name an end user: in the body of `POST /v1/sessions/search`, never the URL. */
async function search(key: string, body: Record<string, unknown>) {
  return json(await api("/v1/sessions/search", { method: "POST", key, body }), 200, sessionList);
}

// Two tenants, each with an end user called `user-1`; built once for the file, on first use.
let built: ReturnType<typeof build> | undefined;
const world = () => {
  built ??= build();
  return built;
};
async function build() {
  const a = await liveAgent({ agent: { visibility: "private" } });
  const a2 = await secondAgent(a);
  const b = await liveAgent({ agent: { visibility: "private" } });
  const t1 = await projectedThread(a, "user-1", ["alpha question"]);
  const t2 = await projectedThread(a, "user-2", ["beta question"]);
  const t3 = await projectedThread(a2, "user-1", ["gamma question"]);
  const t4 = await projectedThread(b, "user-1", ["delta question"]);
  return { a, a2, b, t1, t2, t3, t4 };
}

describe("GET /v1/sessions", () => {
  it("lists only the caller's tenant, newest first, filtered by agent, subject and time", async () => {
    const { a, a2, b, t1, t2, t3, t4 } = await world();
    const all = await list(a.apiKey);
    expect(all.items.map((s) => s.threadId)).toEqual([t3.threadId, t2.threadId, t1.threadId]);
    expect(all.nextCursor).toBeUndefined();
    expect(all.items[2]).toMatchObject({
      threadId: t1.threadId,
      agentId: a.agentId,
      agentName: "Support",
      environment: "development",
      agentVersion: 1,
      subject: "user-1",
      title: "alpha question",
      messageCount: 2,
      lastRun: { status: "succeeded" },
    });
    expect(all.items[2]?.artifactDigest).toMatch(/^sha256:/);

    const ids = async (query: string) => (await list(a.apiKey, query)).items.map((s) => s.threadId);
    expect(await ids(`?agentId=${a.agentId}`)).toEqual([t2.threadId, t1.threadId]);
    expect(await ids(`?agentId=${a2.agentId}`)).toEqual([t3.threadId]);
    const bySubject = async (body: Record<string, unknown>) =>
      (await search(a.apiKey, body)).items.map((s) => s.threadId);
    expect(await bySubject({ subject: "user-1" })).toEqual([t3.threadId, t1.threadId]);
    expect(await bySubject({ subject: "user-1", agentId: a.agentId })).toEqual([t1.threadId]);
    expect(await bySubject({ subject: "nobody" })).toEqual([]);
    const t2Row = all.items.find((s) => s.threadId === t2.threadId);
    expect(await ids(`?updatedAfter=${encodeURIComponent(t2Row?.updatedAt ?? "")}`)).toEqual([t3.threadId]);

    // The other tenant's user-1 sees only their own thread; an agent id from another tenant matches nothing.
    expect((await search(b.apiKey, { subject: "user-1" })).items.map((s) => s.threadId)).toEqual([
      t4.threadId,
    ]);
    expect((await list(b.apiKey, `?agentId=${a.agentId}`)).items).toEqual([]);
  });

  it("pages with opaque cursors bound to the tenant and to the query", async () => {
    const { a, b, t1, t2, t3 } = await world();
    const first = await list(a.apiKey, "?limit=1");
    expect(first.items.map((s) => s.threadId)).toEqual([t3.threadId]);
    const cursor = first.nextCursor ?? "";
    expect(cursor).not.toContain(t3.threadId);
    const second = await list(a.apiKey, `?limit=1&cursor=${encodeURIComponent(cursor)}`);
    expect(second.items.map((s) => s.threadId)).toEqual([t2.threadId]);
    const third = await list(a.apiKey, `?limit=1&cursor=${encodeURIComponent(second.nextCursor ?? "")}`);
    expect(third.items.map((s) => s.threadId)).toEqual([t1.threadId]);
    expect(third.nextCursor).toBeUndefined();

    // One character of the MAC changed (never to itself: the character replaced is the one compared).
    const tampered = `${cursor.slice(0, -2)}${cursor.at(-2) === "A" ? "B" : "A"}${cursor.slice(-1)}`;
    const [payload = "", mac = ""] = cursor.split(".");
    const forged = `${btoa(
      JSON.stringify({ t: a.tenantId, q: "sessions:[null,null,null]", a: '["9999","z"]' }),
    )
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_")}.${mac}`;
    for (const [key, query] of [
      [a.apiKey, `?limit=1&cursor=${encodeURIComponent(tampered)}`],
      [a.apiKey, `?limit=1&cursor=${encodeURIComponent(forged)}`],
      [a.apiKey, `?limit=1&cursor=${encodeURIComponent(`${payload}.`)}`],
      [a.apiKey, "?cursor=not-a-cursor"],
      // The same cursor for another query, or for another tenant, continues nothing.
      [a.apiKey, `?limit=1&agentId=${a.agentId}&cursor=${encodeURIComponent(cursor)}`],
      [b.apiKey, `?limit=1&cursor=${encodeURIComponent(cursor)}`],
    ] as const) {
      await expectError(await api(`/v1/sessions${query}`, { key }), 400, "bad_request");
    }
    for (const query of ["?limit=0", "?limit=201", "?limit=ten", "?updatedAfter=yesterday", "?agent_id=x"]) {
      await expectError(await api(`/v1/sessions${query}`, { key: a.apiKey }), 400, "bad_request");
    }
  });

  it("answers one session, and 404 for another tenant's or an unknown thread", async () => {
    const { a, b, t1, t4 } = await world();
    const one = await json(await api(`/v1/sessions/${t1.threadId}`, { key: a.apiKey }), 200, sessionResponse);
    expect(one).toMatchObject({ threadId: t1.threadId, subject: "user-1", messageCount: 2 });
    const entries = await threadEntries(t1.stub);
    expect(one.leafId).toBe(entries.at(-1)?.id);

    await expectError(await api(`/v1/sessions/${t4.threadId}`, { key: a.apiKey }), 404, "not_found");
    await expectError(await api(`/v1/sessions/${t4.threadId}/messages`, { key: a.apiKey }), 404, "not_found");
    await expectError(await api("/v1/sessions/thr_unknown", { key: a.apiKey }), 404, "not_found");
    await expectError(await api("/v1/sessions/%27%20OR%201%3D1", { key: a.apiKey }), 404, "not_found");
    // B's session is untouched by A's attempts.
    const still = await json(
      await api(`/v1/sessions/${t4.threadId}`, { key: b.apiKey }),
      200,
      sessionResponse,
    );
    expect(still).toMatchObject({ threadId: t4.threadId, messageCount: 2 });
  });

  it("lists a session's messages in seq order, paged, with a read-only key too", async () => {
    const { a } = await world();
    const t = await projectedThread(a, "user-3", ["first turn", "second turn"]);
    const reader = await createApiKey({ tenantId: a.tenantId, apiKey: a.apiKey }, "read");
    const seen: z.infer<typeof messageResponse>[] = [];
    let cursor: string | undefined;
    do {
      const page = await json(
        await api(
          `/v1/sessions/${t.threadId}/messages?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          { key: reader.apiKey },
        ),
        200,
        messageList,
      );
      seen.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const entries = await threadEntries(t.stub);
    expect(seen.map((m) => [m.id, m.seq, m.parentId, m.role, m.kind, m.content])).toEqual(
      entries.map((e) => [e.id, e.seq, e.parent_id, e.role, e.kind, e.text]),
    );
    expect(seen.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(seen[1]).toMatchObject({ status: "complete", runId: expect.any(String) });

    // A messages cursor belongs to its thread.
    const page = await json(
      await api(`/v1/sessions/${t.threadId}/messages?limit=1`, { key: a.apiKey }),
      200,
      messageList,
    );
    const { t1 } = await world();
    await expectError(
      await api(`/v1/sessions/${t1.threadId}/messages?cursor=${encodeURIComponent(page.nextCursor ?? "")}`, {
        key: a.apiKey,
      }),
      400,
      "bad_request",
    );
  });

  it("needs a tenant API key", async () => {
    const { t1 } = await world();
    await expectError(await api("/v1/sessions"), 401, "unauthenticated");
    await expectError(await api("/v1/sessions", { key: t1.token }), 401, "unauthenticated");
    await expectError(await api("/v1/sessions", { key: "sk_nope_nope" }), 401, "unauthenticated");
    expect(env.ENVIRONMENT).toBe("development");
  });
});
