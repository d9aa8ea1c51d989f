// The WebSocket upgrade gate against SECURITY.md's token, claims, time and Origin cases, through real upgrades.
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { allThreadRows, fetchWithEnv, threadObjects } from "../helpers/edge-gate";
import {
  claimCases,
  session as freshSession,
  keyOf,
  now,
  type Session,
  tokenCases,
} from "../helpers/forged-tokens";
import { threadStub } from "../helpers/projection";
import { API, api, expectError } from "../helpers/tenants";
import { connect, FrameReader, type LiveAgent, liveAgent, ORIGIN, upgradeRequest } from "../helpers/threads";
import { forgeToken, launchKeys } from "../helpers/tokens";

let agent: LiveAgent;
beforeAll(async () => {
  agent = await liveAgent();
});

/** A fresh session on this file's agent (or on `other`). */
function session(other: LiveAgent = agent, origin = ORIGIN): Promise<Session> {
  return freshSession(other, origin);
}

type UpgradeOptions = Parameters<typeof upgradeRequest>[1];

/** Asserts a pre-upgrade refusal that created no thread object and wrote no row. */
async function refusedUpgrade(
  threadId: string,
  options: UpgradeOptions,
  status: number,
  code?: string,
): Promise<void> {
  const objects = await threadObjects();
  const rows = await allThreadRows();
  const res = await upgradeRequest(threadId, options);
  expect(res.webSocket).toBeNull();
  if (code === undefined) expect(res.status).toBe(status);
  else await expectError(res, status, code);
  expect(await threadObjects()).toBe(objects);
  expect(await allThreadRows()).toBe(rows);
}

/** Asserts a 101 that selects exactly `agent.v1`, and that the thread answers `ready` for its own id. */
async function accepted(threadId: string, options: UpgradeOptions): Promise<FrameReader> {
  const res = await upgradeRequest(threadId, options);
  if (res.status !== 101) expect.fail(`upgrade answered ${res.status}: ${await res.text()}`);
  expect(res.headers.get("Sec-WebSocket-Protocol")).toBe("agent.v1");
  const ws = res.webSocket!;
  ws.accept();
  const reader = new FrameReader(ws);
  reader.send({ type: "hello", protocol: 1 });
  const ready = await reader.next("ready");
  expect(ready.threadId).toBe(threadId);
  return reader;
}

describe("launch tokens on the upgrade", () => {
  it("refuses an upgrade with no token at all", async () => {
    const s = await session();
    await refusedUpgrade(s.launch.threadId, { protocols: "agent.v1" }, 401, "unauthenticated");
    await refusedUpgrade(s.launch.threadId, {}, 401, "unauthenticated");
  });

  it.each(tokenCases)("refuses %s with 401 before upgrade", async (_name, build) => {
    const s = await session();
    const token = await build(s);
    await refusedUpgrade(s.launch.threadId, { token }, 401, "unauthenticated");
  });

  it("makes no outbound request for a jku or x5u header", async () => {
    const s = await session();
    const spy = vi.spyOn(globalThis, "fetch");
    try {
      for (const header of [
        { jku: "https://attacker.test/jwks.json" },
        { x5u: "https://attacker.test/x.pem" },
      ]) {
        const token = await forgeToken({
          claims: s.claims,
          header,
          key: "attacker-key-attacker-key-attacker",
        });
        await refusedUpgrade(s.launch.threadId, { token }, 401, "unauthenticated");
      }
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it("accepts the forgery helper's baseline, so each refusal above is its one defect", async () => {
    const s = await session();
    const reader = await accepted(s.launch.threadId, { token: await forgeToken({ claims: s.claims }) });
    reader.ws.close();
  });

  it("accepts a token signed with the previous (still verifying) kid", async () => {
    const s = await session();
    const token = await forgeToken({ claims: s.claims, header: { kid: "k1" }, key: keyOf("k1") });
    const reader = await accepted(s.launch.threadId, { token });
    reader.ws.close();
  });

  it("refuses a retired kid once the key set marks it retired", async () => {
    const s = await session();
    const token = await forgeToken({ claims: s.claims, header: { kid: "k1" }, key: keyOf("k1") });
    const retired = JSON.stringify({ ...launchKeys(), retired: ["k1"] });
    const objects = await threadObjects();
    const res = await fetchWithEnv({ LAUNCH_TOKEN_KEYS: retired }, `/v1/threads/${s.launch.threadId}/ws`, {
      headers: {
        Upgrade: "websocket",
        Origin: ORIGIN,
        "Sec-WebSocket-Protocol": `agent.v1, bearer.${token}`,
      },
    });
    await expectError(res, 401, "unauthenticated");
    expect(await threadObjects()).toBe(objects);
  });

  it("refuses a development token on a production Worker", async () => {
    const s = await session();
    const res = await fetchWithEnv({ ENVIRONMENT: "production" }, `/v1/threads/${s.launch.threadId}/ws`, {
      headers: {
        Upgrade: "websocket",
        Origin: ORIGIN,
        "Sec-WebSocket-Protocol": `agent.v1, bearer.${s.launch.token}`,
      },
    });
    await expectError(res, 401, "unauthenticated");
  });
});

describe("claims and time on the upgrade", () => {
  it.each(claimCases)("refuses %s with 401", async (_name, edit) => {
    const s = await session();
    const token = await forgeToken({ claims: edit(s.claims) });
    const res = await upgradeRequest(s.launch.threadId, { token });
    expect(res.status).toBe(401);
    expect(res.webSocket).toBeNull();
  });

  it("refuses each claim case without creating a thread object", async () => {
    const s = await session();
    const objects = await threadObjects();
    for (const [, edit] of claimCases) {
      const res = await upgradeRequest(s.launch.threadId, {
        token: await forgeToken({ claims: edit(s.claims) }),
      });
      expect(res.status).toBe(401);
    }
    expect(await threadObjects()).toBe(objects);
  });

  it("answers an expired token with token_expired", async () => {
    const s = await session();
    const token = await forgeToken({ claims: { ...s.claims, iat: now() - 100, exp: now() - 40 } });
    await refusedUpgrade(s.launch.threadId, { token }, 401, "token_expired");
  });

  it("accepts a token expired by less than the 30 s leeway", async () => {
    const s = await session();
    const token = await forgeToken({ claims: { ...s.claims, iat: now() - 310, exp: now() - 10 } });
    const reader = await accepted(s.launch.threadId, { token });
    reader.ws.close();
  });

  it("refuses a token whose thread was deleted after minting with 401", async () => {
    const s = await session();
    // Erased by the tenant (the thread object keeps a tombstone; the registry is no longer asked on this path).
    expect(
      (await api(`/v1/sessions/${s.launch.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    await refusedUpgrade(s.launch.threadId, { token: s.launch.token }, 401, "unauthenticated");
  });

  it("refuses a token whose agent was disabled after minting with 403", async () => {
    const own = await liveAgent();
    const s = await session(own);
    const patched = await api(`/v1/agents/${own.agentId}`, {
      method: "PATCH",
      key: own.apiKey,
      body: { status: "disabled" },
    });
    expect(patched.status).toBe(200);
    await refusedUpgrade(s.launch.threadId, { token: s.launch.token }, 403, "forbidden");
  });

  it("answers the ninth socket on one thread with 429 before upgrade", async () => {
    const s = await session();
    const open: FrameReader[] = [];
    for (let i = 0; i < 8; i++) open.push(await connect(s.launch));
    const res = await upgradeRequest(s.launch.threadId, { token: s.launch.token });
    expect(res.webSocket).toBeNull();
    await expectError(res, 429, "rate_limited");
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    for (const reader of open) reader.ws.close();
  });
});

describe("subprotocols, query tokens and Upgrade", () => {
  it("selects exactly agent.v1 and never echoes the token", async () => {
    const s = await session();
    const res = await upgradeRequest(s.launch.threadId, { token: s.launch.token });
    expect(res.status).toBe(101);
    expect(res.headers.get("Sec-WebSocket-Protocol")).toBe("agent.v1");
    for (const [, value] of res.headers) expect(value).not.toContain(s.launch.token);
    res.webSocket!.accept();
    res.webSocket!.close();
  });

  it("refuses two bearer entries, even two copies of the same valid token", async () => {
    const s = await session();
    const t = s.launch.token;
    await refusedUpgrade(
      s.launch.threadId,
      { protocols: `agent.v1, bearer.${t}, bearer.${t}` },
      401,
      "unauthenticated",
    );
    const other = await session();
    await refusedUpgrade(
      s.launch.threadId,
      { protocols: `agent.v1, bearer.${t}, bearer.${other.launch.token}` },
      401,
      "unauthenticated",
    );
  });

  it("refuses a bearer entry without agent.v1", async () => {
    const s = await session();
    await refusedUpgrade(
      s.launch.threadId,
      { protocols: `bearer.${s.launch.token}` },
      401,
      "unauthenticated",
    );
    await refusedUpgrade(
      s.launch.threadId,
      { protocols: `agent.v2, bearer.${s.launch.token}` },
      401,
      "unauthenticated",
    );
  });

  it.each(["token", "access_token", "bearer", "jwt"])("refuses a token in ?%s= with 401", async (name) => {
    const s = await session();
    const query = `?${name}=${encodeURIComponent(s.launch.token)}`;
    await refusedUpgrade(s.launch.threadId, { protocols: "agent.v1", query }, 401, "unauthenticated");
    // A query token next to a valid header token is refused too: a leaked URL must never be half-accepted.
    await refusedUpgrade(s.launch.threadId, { token: s.launch.token, query }, 401, "unauthenticated");
  });

  it("answers a plain GET without Upgrade with 426", async () => {
    const s = await session();
    await refusedUpgrade(s.launch.threadId, { token: s.launch.token, upgrade: false }, 426);
    const res = await exports.default.fetch(`${API}/v1/threads/${s.launch.threadId}/ws`, {
      headers: {
        Upgrade: "h2c",
        Origin: ORIGIN,
        "Sec-WebSocket-Protocol": `agent.v1, bearer.${s.launch.token}`,
      },
    });
    expect(res.headers.get("Upgrade")).toBe("websocket");
    const error = await expectError(res, 426, "bad_request");
    expect(error.message).toBe("This endpoint needs a WebSocket upgrade.");
  });
});

describe("Origin on the upgrade", () => {
  it.each([
    ["no Origin", null],
    ["an evil origin", "https://evil.test"],
    ["Origin: null", "null"],
    ["another scheme", "http://shop.example.com"],
    ["another port", "https://shop.example.com:444"],
  ])("refuses %s with 403", async (_name, origin) => {
    const s = await session();
    await refusedUpgrade(s.launch.threadId, { token: s.launch.token, origin }, 403, "forbidden");
  });

  it("refuses agent A's token from agent B's allowed origin with 403", async () => {
    const originB = "https://b.example.net";
    await liveAgent({ agent: { allowedOrigins: [originB] } });
    const s = await session();
    await refusedUpgrade(s.launch.threadId, { token: s.launch.token, origin: originB }, 403, "forbidden");
  });

  it("refuses a token minted for one allowed origin when used from another allowed origin", async () => {
    const two = await liveAgent({ agent: { allowedOrigins: [ORIGIN, "https://www.example.com"] } });
    const s = await session(two);
    await refusedUpgrade(
      s.launch.threadId,
      { token: s.launch.token, origin: "https://www.example.com" },
      403,
      "forbidden",
    );
  });
});

describe("which thread a socket reaches", () => {
  it("answers a token for thread X on /v1/threads/Y/ws with 404, whether Y exists or not", async () => {
    const x = await session();
    const y = await session();
    await refusedUpgrade(y.launch.threadId, { token: x.launch.token }, 404, "not_found");
    await refusedUpgrade(`thr_${"a".repeat(32)}`, { token: x.launch.token }, 404, "not_found");
  });

  it("ignores client-sent internal headers: the socket belongs to the token's thread", async () => {
    const victim = await liveAgent();
    const y = await session(victim);
    const x = await session();
    const forged = JSON.stringify({
      tenantId: victim.tenantId,
      environment: "development",
      agentEntityId: victim.agentId,
      threadId: y.launch.threadId,
      sub: String(y.claims.sub),
      subjectKind: "visitor",
      exp: now() + 300,
    });
    const objects = await threadObjects();
    const res = await exports.default.fetch(`${API}/v1/threads/${x.launch.threadId}/ws`, {
      headers: {
        Upgrade: "websocket",
        Origin: ORIGIN,
        "Sec-WebSocket-Protocol": `agent.v1, bearer.${x.launch.token}`,
        "X-Agent-Threads-Claims": forged,
        "x-agents-lifecycle-props": JSON.stringify({ threadId: y.launch.threadId }),
        "x-partykit-room": "t_forged",
        "x-partykit-namespace": "thread-agent",
      },
    });
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    ws.accept();
    const reader = new FrameReader(ws);
    reader.send({ type: "hello", protocol: 1 });
    const ready = await reader.next("ready");
    expect(ready.threadId).toBe(x.launch.threadId);
    // A launch creates no object: the connect created exactly one, its own thread's (X's), and Y's stays unbound.
    expect(await threadObjects()).toBe(objects + 1);
    const yStub = await threadStub(victim, y.launch.threadId);
    expect(
      await runInDurableObject(
        yStub,
        (_i, state) => state.storage.sql.exec("SELECT COUNT(*) AS n FROM pin").one().n,
      ),
    ).toBe(0);
    ws.close();
  });

  it.each([
    "/agents/thread-agent/anything",
    "/agents/ThreadAgent/anything",
    "/agents/thread-agent/t_0000",
    "/v1/agents/thread-agent/anything",
    "/parties/thread-agent/anything",
  ])("answers %s with 404 and creates no object", async (path) => {
    const s = await session();
    const objects = await threadObjects();
    const attempts: RequestInit[] = [
      { headers: { Origin: ORIGIN } },
      {
        headers: {
          Upgrade: "websocket",
          Origin: ORIGIN,
          "Sec-WebSocket-Protocol": `agent.v1, bearer.${s.launch.token}`,
        },
      },
    ];
    for (const init of attempts) {
      const res = await exports.default.fetch(`${API}${path}`, init);
      expect([404, 401]).toContain(res.status);
      expect(res.webSocket).toBeNull();
      if (!path.startsWith("/v1/agents")) expect(res.status).toBe(404);
    }
    expect(await threadObjects()).toBe(objects);
  });
});
