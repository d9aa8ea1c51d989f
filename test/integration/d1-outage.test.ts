// While D1 is down the conversation goes on: live sockets keep streaming, a valid token reconnects, the socket
// refreshes its token, a visitor resumes; new launches answer 503 with Retry-After and store nothing; afterwards the
// projection catches up with nothing lost. The Worker gets a D1 binding that fails every call; the thread objects'
// own D1 writes fail because the tables they write are taken away.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { invalidateGateAgent } from "../../src/auth/gate-agent-cache";
import { tenantQuota } from "../../src/auth/tenant-quota";
import { failingD1, fetchWithDb } from "../helpers/d1-proxy";
import { allThreadRows, privateLaunchRequest } from "../helpers/edge-gate";
import { drainThread, projectedEntries, threadEntries, threadStub } from "../helpers/projection";
import { expectError, json } from "../helpers/tenants";
import {
  clientMessageId,
  FrameReader,
  freshIp,
  type LiveAgent,
  launchResponse,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";

const OTHER_ORIGIN = "https://other.example.com";
const OFFLINE_TABLES = ["agent_messages", "agent_sessions", "threads"] as const;
let offline = false;

async function takeD1Away(): Promise<void> {
  for (const table of OFFLINE_TABLES) await env.DB.exec(`ALTER TABLE ${table} RENAME TO ${table}_offline`);
  offline = true;
}

async function bringD1Back(): Promise<void> {
  if (!offline) return;
  for (const table of OFFLINE_TABLES) await env.DB.exec(`ALTER TABLE ${table}_offline RENAME TO ${table}`);
  offline = false;
}

afterEach(bringD1Back);

const launchInit = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
  body: JSON.stringify(body),
});

async function launchVia(db: D1Database, body: unknown) {
  return json(await fetchWithDb(db, "/v1/agent-sessions", launchInit(body)), 201, launchResponse);
}

async function connectVia(db: D1Database, session: { threadId: string; token: string }) {
  const res = await fetchWithDb(db, `/v1/threads/${session.threadId}/ws`, {
    headers: {
      Upgrade: "websocket",
      Origin: ORIGIN,
      "Sec-WebSocket-Protocol": `agent.v1, bearer.${session.token}`,
    },
  });
  if (res.status !== 101) expect.fail(`upgrade answered ${res.status}: ${await res.text()}`);
  const ws = res.webSocket!;
  ws.accept();
  const reader = new FrameReader(ws);
  reader.send({ type: "hello", protocol: 1 });
  await reader.next("ready");
  return reader;
}

async function turn(ws: FrameReader, text: string): Promise<string> {
  ws.send({ type: "send", clientMessageId: clientMessageId(), text });
  const user = await ws.next("entry", (f) => f.entry.role === "user" && f.entry.text === text);
  const run = user.entry.runId;
  const done = await ws.next("run", (f) => f.status === "succeeded");
  expect(done.runId).not.toBe(run === null ? "" : undefined);
  return (await ws.next("entry", (f) => f.entry.role === "assistant" && f.entry.runId === done.runId)).entry
    .text;
}

async function liveThread(agent: LiveAgent) {
  const session = await launchVia(env.DB, { agentKey: agent.publicKey });
  const ws = await connectVia(env.DB, session);
  expect(await turn(ws, "before the outage")).toContain("before the outage");
  return { session, ws };
}

describe("a D1 outage", () => {
  it("keeps live sockets streaming, reconnects and refreshes with valid tokens, and loses nothing", async () => {
    const agent = await liveAgent();
    const { session, ws } = await liveThread(agent);
    const down = failingD1();
    await takeD1Away();

    // The live socket streams a whole turn.
    expect(await turn(ws, "during the outage")).toContain("during the outage");
    // The socket renews its token; the new one reconnects, also from an isolate that holds nothing of the agent.
    ws.send({ type: "refresh" });
    const refreshed = await ws.next("token");
    const second = await connectVia(down, { threadId: session.threadId, token: refreshed.token });
    invalidateGateAgent(agent.tenantId, agent.agentId);
    const third = await connectVia(down, session);
    expect(await turn(third, "after reconnecting")).toContain("after reconnecting");
    // A visitor resuming the thread gets a fresh token: the thread vouches for its owner, D1 is not asked.
    const resumed = await launchVia(down, {
      agentKey: agent.publicKey,
      threadId: session.threadId,
      visitorToken: session.visitorToken,
    });
    expect(resumed.threadId).toBe(session.threadId);
    for (const reader of [ws, second, third]) reader.ws.close();

    await bringD1Back();
    const stub = await threadStub(agent, session.threadId);
    const outcomes = await drainThread(stub);
    expect(outcomes.at(-1)).toMatchObject({ failed: false, remaining: 0 });
    const projected = await projectedEntries(agent.tenantId, session.threadId);
    expect(projected).toEqual(await threadEntries(stub));
    expect(projected.filter((e) => e.role === "user").map((e) => e.text)).toEqual([
      "before the outage",
      "during the outage",
      "after reconnecting",
    ]);
  });

  it("answers new launches 503 upstream_unavailable with Retry-After and stores nothing", async () => {
    const agent = await liveAgent();
    const { ws } = await liveThread(agent);
    ws.ws.close();
    const down = failingD1();
    const rows = await allThreadRows();
    const launches = await tenantQuota(env, agent.tenantId).usage("launches");
    await takeD1Away();

    // The agent key is still in this isolate's cache, so the launch reaches its registry write, which fails: the
    // launch counted is given back. A new visitor, and a resume of a thread it does not own, are refused the same way.
    const fresh = await fetchWithDb(down, "/v1/agent-sessions", launchInit({ agentKey: agent.publicKey }));
    expect(fresh.headers.get("Retry-After")).toMatch(/^[1-9]\d*$/);
    await expectError(fresh, 503, "upstream_unavailable");
    // An agent this isolate has never read cannot be launched at all.
    const unknown = await fetchWithDb(
      down,
      "/v1/agent-sessions",
      launchInit({ agentKey: "pk_neverseen0123" }),
    );
    await expectError(unknown, 503, "upstream_unavailable");

    await bringD1Back();
    expect(await allThreadRows()).toBe(rows);
    expect(await tenantQuota(env, agent.tenantId).usage("launches")).toBe(launches);
  });

  it("admits a token only from the origin it was issued for while the gate knows nothing of the agent", async () => {
    const agent = await liveAgent({ agent: { allowedOrigins: [ORIGIN, OTHER_ORIGIN] } });
    const session = await launchVia(env.DB, { agentKey: agent.publicKey });
    const backend = await json(
      await privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "user-outage" }),
      201,
      launchResponse,
    );
    const down = failingD1();
    // A cold cache in this isolate: only the token can speak for the agent.
    invalidateGateAgent(agent.tenantId, agent.agentId);
    const get = (token: { threadId: string; token: string }, origin?: string) =>
      fetchWithDb(down, `/v1/threads/${token.threadId}`, {
        headers: {
          Authorization: `Bearer ${token.token}`,
          ...(origin !== undefined ? { Origin: origin } : {}),
        },
      });

    // Another origin, even one the agent allows, is refused; the token's own origin is served.
    await expectError(await get(session, OTHER_ORIGIN), 403, "forbidden");
    expect((await get(session, ORIGIN)).status).toBe(200);
    // A backend's token names no origin, so it vouches for no page: from one it waits for D1; without one it works.
    await expectError(await get(backend, ORIGIN), 503, "upstream_unavailable");
    expect((await get(backend)).status).toBe(200);
  });
});
