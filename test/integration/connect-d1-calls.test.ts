// The connect path leaves D1: once the isolate's gate cache holds the agent, a WebSocket connect, every thread HTTP
// call and a visitor's resume launch make no D1 call at all from the Worker (the thread object decides ownership);
// thread HTTP re-reads its token's standing once per grant per 5 s (docs/security.md, "Launch tokens over HTTP").
import { describe, expect, it } from "vitest";
import { countingD1, fetchWithDb } from "../helpers/d1-proxy";
import { json } from "../helpers/tenants";
import {
  clientMessageId,
  FrameReader,
  freshIp,
  launch,
  launchResponse,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";

function upgradeInit(token: string): RequestInit {
  return {
    headers: { Upgrade: "websocket", Origin: ORIGIN, "Sec-WebSocket-Protocol": `agent.v1, bearer.${token}` },
  };
}

/** Upgrades through the Worker under `db`, sends hello and waits for `ready`. */
async function connectVia(db: D1Database, session: { threadId: string; token: string }) {
  const res = await fetchWithDb(db, `/v1/threads/${session.threadId}/ws`, upgradeInit(session.token));
  if (res.status !== 101) expect.fail(`upgrade answered ${res.status}: ${await res.text()}`);
  const ws = res.webSocket!;
  ws.accept();
  const reader = new FrameReader(ws);
  reader.send({ type: "hello", protocol: 1 });
  await reader.next("ready");
  return reader;
}

describe("D1 calls on the connect path", () => {
  it("a connect with a warm gate cache makes none; the first one of an isolate reads the agent once", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const d1 = countingD1();

    const first = await connectVia(d1.db, session);
    first.ws.close();
    // At most the agent-with-tenant read: never the thread registry.
    expect(d1.calls.filter((call) => !call.startsWith("prepare:SELECT"))).toEqual([]);
    expect(d1.calls.length).toBeLessThanOrEqual(1);

    for (let i = 0; i < 3; i++) {
      d1.reset();
      const again = await connectVia(d1.db, session);
      again.ws.close();
      expect(d1.calls).toEqual([]);
    }
  });

  it("thread HTTP calls (info, entries, a message) make none once warm", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const d1 = countingD1();
    const auth = { Authorization: `Bearer ${session.token}`, Origin: ORIGIN };
    expect((await fetchWithDb(d1.db, `/v1/threads/${session.threadId}`, { headers: auth })).status).toBe(200);

    d1.reset();
    expect((await fetchWithDb(d1.db, `/v1/threads/${session.threadId}`, { headers: auth })).status).toBe(200);
    expect(
      (await fetchWithDb(d1.db, `/v1/threads/${session.threadId}/entries`, { headers: auth })).status,
    ).toBe(200);
    const posted = await fetchWithDb(d1.db, `/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ clientMessageId: clientMessageId(), text: "hello" }),
    });
    expect(posted.status).toBe(201);
    expect(d1.calls).toEqual([]);
  });

  it("a visitor's resume launch (visitor token + threadId) asks the thread, not D1, once warm", async () => {
    const agent = await liveAgent();
    const first = await launch(agent.publicKey);
    const reader = await connectVia(countingD1().db, first);
    reader.ws.close();
    const d1 = countingD1();
    const resume = () =>
      fetchWithDb(d1.db, "/v1/agent-sessions", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
        body: JSON.stringify({
          agentKey: agent.publicKey,
          threadId: first.threadId,
          visitorToken: first.visitorToken,
        }),
      });
    await json(await resume(), 201, launchResponse);

    d1.reset();
    const resumed = await json(await resume(), 201, launchResponse);
    expect(resumed.threadId).toBe(first.threadId);
    expect(d1.calls).toEqual([]);
  });
});
