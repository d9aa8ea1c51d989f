// Thread HTTP behind the edge gate, and the thread object's own gate: its stored binding refuses other claims.
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { publishedVersionResponse } from "../../src/shared/api";
import { type ThreadClaims, threadObjectName } from "../../src/thread/contract";
import { readToken, threadObjects } from "../helpers/edge-gate";
import { claimCases, now, session, tokenCases } from "../helpers/forged-tokens";
import { API, api, expectError, json } from "../helpers/tenants";
import {
  clientMessageId,
  connect,
  type Launch,
  type LiveAgent,
  launch,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";
import { forgeToken } from "../helpers/tokens";

let agent: LiveAgent;
beforeAll(async () => {
  agent = await liveAgent();
});

function threadGet(threadId: string, headers: Record<string, string>, path = ""): Promise<Response> {
  return exports.default.fetch(`${API}/v1/threads/${threadId}${path}`, {
    headers: { Origin: ORIGIN, ...headers },
  });
}

const threadInfo = z.object({
  threadId: z.string(),
  agent: z.object({
    id: z.string(),
    name: z.string(),
    version: z.number(),
    versionId: z.string(),
    digest: z.string(),
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
  leafId: z.string().nullable(),
});

const entriesBody = z.object({
  items: z.array(z.object({ id: z.string(), role: z.string().nullable(), text: z.string() })),
});

async function claimsOf(session: Launch): Promise<Record<string, unknown>> {
  return { ...readToken(session.token).claims };
}

describe("thread HTTP authentication", () => {
  it("answers GET /v1/threads/:id with the pinned agent name, version, digest and leaf", async () => {
    const session = await launch(agent.publicKey);
    const empty = await json(
      await threadGet(session.threadId, { Authorization: `Bearer ${session.token}` }),
      200,
      threadInfo,
    );
    const version = await json(
      await api(`/v1/agents/${agent.agentId}/versions/1`, { key: agent.apiKey }),
      200,
      publishedVersionResponse.loose(),
    );
    expect(empty).toMatchObject({
      threadId: session.threadId,
      agent: { id: agent.agentId, name: "Support", version: 1, digest: version.digest },
      leafId: null,
    });
    expect(Number.isNaN(Date.parse(empty.createdAt))).toBe(false);

    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "hi" });
    await ws.next("run", (f) => f.status === "succeeded");
    const leaf = await ws.next("entry", (f) => f.entry.role === "assistant");
    const after = await json(
      await threadGet(session.threadId, { Authorization: `Bearer ${session.token}` }),
      200,
      threadInfo,
    );
    expect(after.leafId).toBe(leaf.entry.id);
    ws.ws.close();
  });

  it.each([
    ["no Authorization", {}],
    ["Basic", { Authorization: `Basic ${btoa("user:pass")}` }],
    ["Token", { Authorization: "Token <jwt>" }],
    ["an empty Bearer", { Authorization: "Bearer " }],
    ["Bearer with two tokens", { Authorization: "Bearer a.b.c d.e.f" }],
  ])("answers %s with 401", async (_name, headers) => {
    const session = await launch(agent.publicKey);
    const objects = await threadObjects();
    await expectError(await threadGet(session.threadId, headers), 401, "unauthenticated");
    expect(await threadObjects()).toBe(objects);
  });

  it("answers a valid token under the Basic or Token scheme with 401", async () => {
    const session = await launch(agent.publicKey);
    for (const scheme of ["Basic", "Token", "JWT", "Bearer:"]) {
      await expectError(
        await threadGet(session.threadId, { Authorization: `${scheme} ${session.token}` }),
        401,
        "unauthenticated",
      );
    }
  });

  it("accepts the Bearer scheme in any letter case", async () => {
    const session = await launch(agent.publicKey);
    const res = await threadGet(session.threadId, { Authorization: `bearer ${session.token}` });
    expect(res.status).toBe(200);
  });

  it("refuses a token offered in Sec-WebSocket-Protocol or the query string on HTTP", async () => {
    const session = await launch(agent.publicKey);
    await expectError(
      await threadGet(session.threadId, { "Sec-WebSocket-Protocol": `agent.v1, bearer.${session.token}` }),
      401,
      "unauthenticated",
    );
    await expectError(
      await threadGet(session.threadId, {}, `?token=${session.token}`),
      401,
      "unauthenticated",
    );
    await expectError(
      await threadGet(
        session.threadId,
        { Authorization: `Bearer ${session.token}` },
        `?access_token=${session.token}`,
      ),
      401,
      "unauthenticated",
    );
  });

  it("answers an expired token with 401 token_expired while a socket on the thread is open", async () => {
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const expired = await forgeToken({
      claims: { ...(await claimsOf(session)), iat: now() - 200, exp: now() - 60 },
    });
    await expectError(
      await threadGet(session.threadId, { Authorization: `Bearer ${expired}` }),
      401,
      "token_expired",
    );
    await expectError(
      await threadGet(session.threadId, { Authorization: `Bearer ${expired}` }, "/entries"),
      401,
      "token_expired",
    );
    // The socket opened earlier is not affected.
    ws.send({ type: "ping" });
    await ws.next("pong");
    ws.ws.close();
  });

  it("accepts a token expired by less than the 30 s leeway, as the upgrade does", async () => {
    const session = await launch(agent.publicKey);
    const token = await forgeToken({
      claims: { ...(await claimsOf(session)), iat: now() - 310, exp: now() - 10 },
    });
    const res = await threadGet(session.threadId, { Authorization: `Bearer ${token}` });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it("refuses a token for another thread, a disallowed origin and a deleted thread", async () => {
    const x = await launch(agent.publicKey);
    const y = await launch(agent.publicKey);
    await expectError(await threadGet(y.threadId, { Authorization: `Bearer ${x.token}` }), 404, "not_found");
    await expectError(
      await threadGet(x.threadId, { Authorization: `Bearer ${x.token}`, Origin: "https://evil.test" }),
      403,
      "forbidden",
    );
    // Erased by the tenant (the thread object keeps a tombstone; the registry is no longer asked on this path).
    expect((await api(`/v1/sessions/${x.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    await expectError(
      await threadGet(x.threadId, { Authorization: `Bearer ${x.token}` }),
      401,
      "unauthenticated",
    );
  });

  it("refuses a message POST under a refused token and stores nothing", async () => {
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const expired = await forgeToken({
      claims: { ...(await claimsOf(session)), iat: now() - 200, exp: now() - 60 },
    });
    for (const authorization of [`Bearer ${expired}`, `Basic ${btoa("a:b")}`, "Bearer abc"]) {
      const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: authorization, Origin: ORIGIN, "Content-Type": "application/json" },
        body: JSON.stringify({ clientMessageId: clientMessageId(), text: "sneaky" }),
      });
      expect(res.status).toBe(401);
    }
    const entries = await json(
      await threadGet(session.threadId, { Authorization: `Bearer ${session.token}` }, "/entries"),
      200,
      entriesBody,
    );
    expect(entries.items).toEqual([]);
    ws.ws.close();
  });

  it("lets a browser on the allowed origin read thread responses (CORS), and nobody else", async () => {
    const session = await launch(agent.publicKey);
    const preflight = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/entries`, {
      method: "OPTIONS",
      headers: {
        Origin: ORIGIN,
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
    expect(preflight.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("authorization");

    const evilPreflight = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/entries`, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.test", "Access-Control-Request-Method": "GET" },
    });
    expect(evilPreflight.headers.get("Access-Control-Allow-Origin")).toBeNull();

    const ok = await threadGet(session.threadId, { Authorization: `Bearer ${session.token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);

    const refused = await threadGet(session.threadId, {
      Authorization: `Bearer ${session.token}`,
      Origin: "https://evil.test",
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });
});

describe("forged and defective tokens on thread HTTP", () => {
  it.each(tokenCases)("refuses %s with 401", async (_name, build) => {
    const s = await session(agent);
    const token = await build(s);
    const objects = await threadObjects();
    for (const path of ["", "/entries"]) {
      await expectError(
        await threadGet(s.launch.threadId, { Authorization: `Bearer ${token}` }, path),
        401,
        "unauthenticated",
      );
    }
    expect(await threadObjects()).toBe(objects);
  });

  it.each(claimCases)("refuses %s with 401", async (_name, edit) => {
    const s = await session(agent);
    const token = await forgeToken({ claims: edit(s.claims) });
    const res = await threadGet(s.launch.threadId, { Authorization: `Bearer ${token}` });
    expect(res.status, await res.clone().text()).toBe(401);
  });

  it("accepts the unedited claims through the same forgery path (positive control)", async () => {
    const s = await session(agent);
    const token = await forgeToken({ claims: s.claims });
    expect((await threadGet(s.launch.threadId, { Authorization: `Bearer ${token}` })).status).toBe(200);
  });
});

/** The object a thread lives in, addressed exactly as the Worker addresses it. */
async function threadStub(tenantId: string, agentId: string, threadId: string) {
  const name = await threadObjectName(env.DO_NAME_KEY, {
    tenantId,
    environment: "development",
    agentId,
    threadId,
  });
  return env.THREAD.get(env.THREAD.idFromName(name));
}

describe("the thread object's binding", () => {
  it("refuses claims for another tenant or agent with 403 before reading anything", async () => {
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "private words" });
    await ws.next("run", (f) => f.status === "succeeded");
    ws.ws.close();

    const other = await liveAgent();
    const stub = await threadStub(agent.tenantId, agent.agentId, session.threadId);
    const claims: ThreadClaims = {
      tenantId: agent.tenantId,
      environment: "development",
      agentId: agent.agentId,
      threadId: session.threadId,
      sub: String(readToken(session.token).claims.sub),
      subjectKind: "visitor",
    };
    const mismatches: ThreadClaims[] = [
      { ...claims, tenantId: other.tenantId },
      { ...claims, agentId: other.agentId },
      { ...claims, tenantId: other.tenantId, agentId: other.agentId },
      { ...claims, threadId: `thr_${"b".repeat(32)}` },
      { ...claims, environment: "production" },
    ];
    for (const mismatch of mismatches) {
      const { tenantId, environment, agentId, threadId } = mismatch;
      const answers = [
        await stub.threadInfo(mismatch),
        await stub.threadEntries(mismatch, {}),
        await stub.postMessage(mismatch, { clientMessageId: clientMessageId(), text: "sneaky" }),
        await stub.cancelRun(mismatch, "run_x"),
        await stub.exportThread({ tenantId, environment, agentId, threadId }),
        await stub.eraseThread({ tenantId, environment, agentId, threadId }),
        await stub.applyRetention({ tenantId, environment, agentId, threadId }),
      ];
      for (const answer of answers) {
        const text = JSON.stringify(answer);
        expect(answer.ok ? null : answer.code, text).toBe("forbidden");
        expect(text).not.toContain("private words");
        expect(text).not.toContain(session.threadId);
      }
      const upgrade = await stub.fetch(
        new Request("https://thread.internal/ws", {
          headers: { Upgrade: "websocket", "X-Agent-Threads-Claims": JSON.stringify(mismatch) },
        }),
      );
      expect(upgrade.webSocket).toBeNull();
      expect(upgrade.status).toBe(403);
    }

    // The right claims still read the thread: the refusals changed nothing.
    const same = await stub.threadEntries(claims, {});
    expect(same.ok && same.value.items.map((e) => e.role)).toEqual(["user", "assistant"]);
  });

  it("refuses a request without claims, or with malformed claims, with 401", async () => {
    const session = await launch(agent.publicKey);
    (await connect(session)).ws.close();
    const stub = await threadStub(agent.tenantId, agent.agentId, session.threadId);
    for (const header of [undefined, "", "{", "null", "[]", JSON.stringify({ tenantId: agent.tenantId })]) {
      const res = await stub.fetch(
        new Request("https://thread.internal/ws", {
          headers: {
            Upgrade: "websocket",
            ...(header === undefined ? {} : { "X-Agent-Threads-Claims": header }),
          },
        }),
      );
      expect(res.status).toBe(401);
      expect(res.webSocket).toBeNull();
    }
    for (const claims of [undefined, "", null, [], { tenantId: agent.tenantId }]) {
      // Over RPC the claims are a value, parsed by the object exactly as the header is.
      const answer = await stub.threadInfo(claims as never);
      expect(answer.ok ? null : answer.code).toBe("unauthenticated");
      const addressed = await stub.exportThread(claims as never);
      expect(addressed.ok ? null : addressed.code).toBe("unauthenticated");
    }
  });

  it("never lets a thread's object name be derived from unverified input", async () => {
    const session = await launch(agent.publicKey);
    const objects = await threadObjects();
    // A request naming the thread but carrying no valid token never reaches (or creates) an object.
    for (const path of ["", "/entries", "/messages", "/ws"]) {
      const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}${path}`, {
        headers: { Origin: ORIGIN, "X-Agent-Threads-Claims": "{}" },
      });
      expect([401, 426]).toContain(res.status);
    }
    expect(await threadObjects()).toBe(objects);
  });
});

describe("thread HTTP messages and runs", () => {
  const post = (session: Launch, path: string, body: string, headers: Record<string, string> = {}) =>
    exports.default.fetch(`${API}/v1/threads/${session.threadId}${path}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${session.token}`,
        Origin: ORIGIN,
        "Content-Type": "application/json",
        ...headers,
      },
      body,
    });
  const entries = async (session: Launch) =>
    json(
      await threadGet(session.threadId, { Authorization: `Bearer ${session.token}` }, "/entries"),
      200,
      entriesBody,
    );

  it("refuses a bad message body with the thread API's statuses and messages, storing nothing", async () => {
    const session = await launch(agent.publicKey);
    const valid = JSON.stringify({ clientMessageId: clientMessageId(), text: "hello" });
    const plain = await expectError(
      await post(session, "/messages", valid, { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
    expect(plain.message).toBe("Content-Type must be application/json.");
    const big = JSON.stringify({ clientMessageId: clientMessageId(), text: "x".repeat(70_000) });
    expect((await expectError(await post(session, "/messages", big), 413, "payload_too_large")).message).toBe(
      "Request body too large.",
    );
    expect((await expectError(await post(session, "/messages", "{"), 400, "bad_request")).message).toBe(
      "Request body is not valid JSON.",
    );
    const invalid = await expectError(
      await post(session, "/messages", JSON.stringify({ clientMessageId: "short", text: "" })),
      400,
      "bad_request",
    );
    expect(invalid.message).toBe("Request body is invalid.");
    expect(z.array(z.object({ path: z.string(), message: z.string() })).parse(invalid.details)).toEqual([
      { path: "clientMessageId", message: expect.any(String) },
      { path: "text", message: expect.any(String) },
    ]);
    expect((await entries(session)).items).toEqual([]);
  });

  it("answers a retried clientMessageId with 200 and the same entries, starting nothing", async () => {
    const session = await launch(agent.publicKey);
    const body = JSON.stringify({ clientMessageId: clientMessageId(), text: "once" });
    const first = await post(session, "/messages", body);
    expect(first.status).toBe(201);
    const again = await post(session, "/messages", body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
    expect((await entries(session)).items.map((e) => e.role)).toEqual(["user", "assistant"]);
  });

  it("cancels a running reply with 202, and answers an unknown run or path with 404", async () => {
    const slow = await liveAgent({
      artifact: { model: { provider: "local", model: "echo", local: { chunks: 50, chunkDelayMs: 50 } } },
    });
    const session = await launch(slow.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "go on and on" });
    const d = await ws.next("delta", (f) => f.seq === 2);
    const cancelled = await post(session, `/runs/${d.runId}/cancel`, "");
    expect(cancelled.status).toBe(202);
    expect(await cancelled.json()).toEqual({ runId: d.runId, status: "cancelling" });
    await ws.next("run", (f) => f.runId === d.runId && f.status === "aborted");
    const unknown = await expectError(await post(session, "/runs/run_nope/cancel", ""), 404, "not_found");
    expect(unknown.message).toBe("Run not found.");
    await expectError(await post(session, "/nowhere", ""), 404, "not_found");
    ws.ws.close();
  });
});
