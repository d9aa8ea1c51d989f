// GET /v1/me/threads: an end user's own threads with one agent, scoped by the launch token alone.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { myThreadResponse } from "../../src/shared/sessions-api";
import { converse, drainThread, launchFor, secondAgent, threadStub } from "../helpers/projection";
import { api, expectError, json } from "../helpers/tenants";
import { type LiveAgent, launch, liveAgent, ORIGIN } from "../helpers/threads";

const myThreads = z.object({ items: z.array(myThreadResponse.strict()), nextCursor: z.string().optional() });

async function projected(agent: LiveAgent, subject: string, text: string) {
  const session = await launchFor(agent, subject);
  await converse(session, [text]);
  await drainThread(await threadStub(agent, session.threadId));
  return session;
}

function mine(token: string, query = "", headers: Record<string, string> = {}) {
  return api(`/v1/me/threads${query}`, { headers: { Authorization: `Bearer ${token}`, ...headers } });
}

let built: ReturnType<typeof build> | undefined;
const world = () => {
  built ??= build();
  return built;
};
async function build() {
  const a = await liveAgent({ agent: { visibility: "private" } });
  const other = await secondAgent(a);
  const b = await liveAgent({ agent: { visibility: "private" } });
  const first = await projected(a, "user-1", "my first thread");
  const second = await projected(a, "user-1", "my second thread");
  const someoneElse = await projected(a, "user-2", "not yours");
  const otherTenant = await projected(b, "user-1", "other tenant, same user id");
  const otherAgent = await projected(other, "user-1", "other agent");
  return { a, b, first, second, someoneElse, otherTenant, otherAgent };
}

describe("GET /v1/me/threads", () => {
  it("lists exactly this subject's threads with this agent, newest first", async () => {
    const { first, second, someoneElse, otherTenant, otherAgent } = await world();
    const body = await json(await mine(first.token), 200, myThreads);
    expect(body.items.map((t) => t.threadId)).toEqual([second.threadId, first.threadId]);
    expect(body.items[1]).toMatchObject({ title: "my first thread", messageCount: 2, agentVersion: 1 });
    expect(JSON.stringify(body)).not.toContain("user-1");

    // Any of the subject's tokens gives the same list; other subjects, tenants and agents see only their own.
    expect((await json(await mine(second.token), 200, myThreads)).items.map((t) => t.threadId)).toEqual([
      second.threadId,
      first.threadId,
    ]);
    expect((await json(await mine(someoneElse.token), 200, myThreads)).items.map((t) => t.threadId)).toEqual([
      someoneElse.threadId,
    ]);
    expect((await json(await mine(otherTenant.token), 200, myThreads)).items.map((t) => t.threadId)).toEqual([
      otherTenant.threadId,
    ]);
    expect((await json(await mine(otherAgent.token), 200, myThreads)).items.map((t) => t.threadId)).toEqual([
      otherAgent.threadId,
    ]);
  });

  it("pages with a cursor bound to the subject's list", async () => {
    const { first, second, someoneElse } = await world();
    const page = await json(await mine(first.token, "?limit=1"), 200, myThreads);
    expect(page.items.map((t) => t.threadId)).toEqual([second.threadId]);
    const cursor = encodeURIComponent(page.nextCursor ?? "");
    const next = await json(await mine(first.token, `?limit=1&cursor=${cursor}`), 200, myThreads);
    expect(next.items.map((t) => t.threadId)).toEqual([first.threadId]);
    expect(next.nextCursor).toBeUndefined();

    await expectError(await mine(someoneElse.token, `?cursor=${cursor}`), 400, "bad_request");
    await expectError(await mine(first.token, `?cursor=${cursor.slice(0, -3)}`), 400, "bad_request");
    await expectError(await mine(first.token, "?limit=500"), 400, "bad_request");
  });

  it("refuses anything but a live launch token in the Authorization header", async () => {
    const { a, first } = await world();
    await expectError(await api("/v1/me/threads"), 401, "unauthenticated");
    await expectError(await api("/v1/me/threads", { key: a.apiKey }), 401, "unauthenticated");
    await expectError(await mine(`${first.token}x`), 401, "unauthenticated");
    await expectError(await api(`/v1/me/threads?token=${first.token}`), 401, "unauthenticated");
    await expectError(
      await api("/v1/me/threads", { headers: { Authorization: `Basic ${first.token}` } }),
      401,
      "unauthenticated",
    );
  });

  it("works for an anonymous visitor of a public agent from an allowed origin, and refuses other origins", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    await converse(session, ["hello from a visitor"]);
    await drainThread(await threadStub(agent, session.threadId));
    const res = await mine(session.token, "", { Origin: ORIGIN });
    const body = await json(res, 200, myThreads);
    expect(body.items.map((t) => t.threadId)).toEqual([session.threadId]);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
    await expectError(await mine(session.token, "", { Origin: "https://evil.test" }), 403, "forbidden");
  });

  it("stops answering a token once its thread is erased, while the subject's other tokens still work", async () => {
    const a = await liveAgent({ agent: { visibility: "private" } });
    const kept = await projected(a, "user-9", "kept");
    const erased = await projected(a, "user-9", "erased");
    expect((await json(await mine(kept.token), 200, myThreads)).items).toHaveLength(2);
    expect((await api(`/v1/sessions/${erased.threadId}`, { method: "DELETE", key: a.apiKey })).status).toBe(
      204,
    );
    await expectError(await mine(erased.token), 401, "unauthenticated");
    expect((await json(await mine(kept.token), 200, myThreads)).items.map((t) => t.threadId)).toEqual([
      kept.threadId,
    ]);
  });
});
