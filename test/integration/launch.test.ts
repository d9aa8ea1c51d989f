// POST /v1/agent-sessions against SECURITY.md's launch cases: every refusal is a 4xx that stores and consumes nothing.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantQuota } from "../../src/auth/tenant-quota";
import {
  allThreadRows,
  bodyWithoutRequestId,
  fetchWithEnv,
  privateLaunchRequest,
  readToken,
  refusedWithoutTrace,
  tenantFootprint,
} from "../helpers/edge-gate";
import { API, api, createApiKey, createTenant, expectError, json } from "../helpers/tenants";
import {
  freshIp,
  launch,
  launchRequest,
  launchResponse,
  liveAgent,
  ORIGIN,
  upgradeRequest,
} from "../helpers/threads";
import { visitorKeys } from "../helpers/tokens";

const THREAD_ID = /^thr_[0-9a-f]{32}$/;

describe("public launch from a browser", () => {
  it("answers 201 with a launch token, visitor token and the CORS header for the allowed origin", async () => {
    const agent = await liveAgent();
    const before = await tenantFootprint(agent.tenantId);
    const res = await launchRequest({ agentKey: agent.publicKey });
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
    expect(res.headers.get("Vary")).toContain("Origin");
    const body = await json(res, 201, launchResponse);

    expect(body.threadId).toMatch(THREAD_ID);
    expect(body.protocol).toBe("agent.v1");
    expect(body.websocketUrl).toBe(`ws://api.test/v1/threads/${body.threadId}/ws`);
    expect(body.threadUrl).toBe(`http://api.test/v1/threads/${body.threadId}`);
    const expiresIn = Date.parse(body.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(290_000);
    expect(expiresIn).toBeLessThanOrEqual(300_000);

    const launchToken = readToken(body.token);
    expect(launchToken.header).toMatchObject({ alg: "HS256", typ: "agent-launch+jwt", kid: "k2" });
    expect(launchToken.claims).toMatchObject({
      iss: "agent-threads",
      aud: "agent-threads:development",
      tenantId: agent.tenantId,
      agentEntityId: agent.agentId,
      environment: "development",
      threadId: body.threadId,
      origin: ORIGIN,
    });
    expect(launchToken.claims.exp! - launchToken.claims.iat!).toBe(300);
    expect(launchToken.claims.jti).toEqual(expect.any(String));
    expect(launchToken.claims.sub).toMatch(/^vis_[0-9a-f]{32}$/);

    const visitor = readToken(body.visitorToken!);
    expect(visitor.header).toMatchObject({ alg: "HS256", typ: "agent-visitor+jwt" });
    expect(visitor.claims).toMatchObject({
      sub: launchToken.claims.sub,
      tenantId: agent.tenantId,
      agentEntityId: agent.agentId,
    });

    expect(await tenantFootprint(agent.tenantId)).toEqual({
      threads: before.threads + 1,
      launches: before.launches + 1,
    });
  });

  it("resumes a visitor's own thread with its visitor token, as the same subject", async () => {
    const agent = await liveAgent();
    const first = await launch(agent.publicKey);
    const rows = await allThreadRows();
    const res = await launchRequest({
      agentKey: agent.publicKey,
      threadId: first.threadId,
      visitorToken: first.visitorToken,
    });
    const resumed = await json(res, 201, launchResponse);
    expect(resumed.threadId).toBe(first.threadId);
    expect(resumed.visitorToken).toBeUndefined();
    expect(readToken(resumed.token).claims.sub).toBe(readToken(first.token).claims.sub);
    expect(resumed.token).not.toBe(first.token);
    expect(await allThreadRows()).toBe(rows);
  });

  it("gives a returning visitor a new thread under the same subject when no threadId is named", async () => {
    const agent = await liveAgent();
    const first = await launch(agent.publicKey);
    const second = await launch(agent.publicKey, { visitorToken: first.visitorToken });
    expect(second.threadId).not.toBe(first.threadId);
    expect(readToken(second.token).claims.sub).toBe(readToken(first.token).claims.sub);
  });

  it("answers 404 when a visitor names another visitor's thread", async () => {
    const agent = await liveAgent();
    const alice = await launch(agent.publicKey);
    const mallory = await launch(agent.publicKey);
    await refusedWithoutTrace(
      agent.tenantId,
      () =>
        launchRequest({
          agentKey: agent.publicKey,
          threadId: alice.threadId,
          visitorToken: mallory.visitorToken,
        }),
      404,
      "not_found",
    );
  });

  it("answers 404 for a thread id that was never launched", async () => {
    const agent = await liveAgent();
    const visitor = await launch(agent.publicKey);
    await refusedWithoutTrace(
      agent.tenantId,
      () =>
        launchRequest({
          agentKey: agent.publicKey,
          threadId: `thr_${"0".repeat(32)}`,
          visitorToken: visitor.visitorToken,
        }),
      404,
      "not_found",
    );
  });

  it("answers 401 when resuming without a visitor token", async () => {
    const agent = await liveAgent();
    const first = await launch(agent.publicKey);
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey, threadId: first.threadId }),
      401,
      "unauthenticated",
    );
  });

  it("refuses a visitor token of another agent, and a launch token used as a visitor token", async () => {
    const a = await liveAgent();
    const b = await liveAgent();
    const fromA = await launch(a.publicKey);
    for (const visitorToken of [fromA.visitorToken, fromA.token, "not-a-token"]) {
      await refusedWithoutTrace(
        b.tenantId,
        () => launchRequest({ agentKey: b.publicKey, visitorToken }),
        401,
        "unauthenticated",
      );
    }
  });
});

describe("agent keys", () => {
  it("answers unknown, disabled and rotated keys with one identical 401 body", async () => {
    const disabled = await liveAgent();
    const rotated = await liveAgent();
    expect(
      (
        await api(`/v1/agents/${disabled.agentId}`, {
          method: "PATCH",
          key: disabled.apiKey,
          body: { status: "disabled" },
        })
      ).status,
    ).toBe(200);
    const patched = await api(`/v1/agents/${rotated.agentId}`, {
      method: "PATCH",
      key: rotated.apiKey,
      body: { rotatePublicKey: true },
    });
    const newKey = ((await patched.json()) as { publicKey: string }).publicKey;
    expect(newKey).not.toBe(rotated.publicKey);

    const bodies: unknown[] = [];
    for (const [tenantId, agentKey] of [
      [disabled.tenantId, `pk_${"Z".repeat(26)}`],
      [disabled.tenantId, disabled.publicKey],
      [rotated.tenantId, rotated.publicKey],
    ] as const) {
      const res = await refusedWithoutTrace(
        tenantId,
        () => launchRequest({ agentKey }),
        401,
        "unauthenticated",
      );
      bodies.push(await bodyWithoutRequestId(res));
    }
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);

    // The rotated agent still launches under its new key.
    await launch(newKey);
  });

  it.each([
    ["a wrong prefix", "sk_abcdefghijklmnopqrstuvwxyz"],
    ["a dash instead of the underscore", "pk-abcdefghijklmnopqrstuvwxyz"],
    ["unicode", "pk_ünïcödé🔑ключ"],
    ["SQL", "' OR 1=1 --"],
    ["SQL after a prefix", "pk_' OR '1'='1"],
    ["an empty string", ""],
    ["a number", 12345],
    ["null", null],
  ])("answers a malformed agent key (%s) with 400 and stores nothing", async (_name, agentKey) => {
    const rows = await allThreadRows();
    await expectError(await launchRequest({ agentKey }), 400, "bad_request");
    expect(await allThreadRows()).toBe(rows);
  });

  it("answers a 10 kB agent key with a 4xx (the body is over the 8 KiB cap: 413), never 500", async () => {
    const rows = await allThreadRows();
    await expectError(
      await launchRequest({ agentKey: `pk_${"a".repeat(10_000)}` }),
      413,
      "payload_too_large",
    );
    expect(await allThreadRows()).toBe(rows);
  });

  it.each([
    ["10 kB", `sk_${"a".repeat(10_000)}`],
    ["SQL", "' OR 1=1 --"],
    ["a public key", "pk_abcdefghijklmnopqrstuvwxyz"],
    ["a wrong secret", "sk_abcdefghij_0000000000000000000000000000000000000000000"],
  ])("answers a malformed tenant key (%s) on a private launch with 401", async (_name, key) => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    await refusedWithoutTrace(
      agent.tenantId,
      () => privateLaunchRequest(key, { agentId: agent.agentId, subject: "alice" }),
      401,
      "unauthenticated",
    );
  });
});

describe("origins and CORS", () => {
  it.each([
    ["a disallowed origin", "https://evil.test"],
    ["no Origin", null],
    ["Origin: null", "null"],
    ["another scheme", "http://shop.example.com"],
    ["another port", "https://shop.example.com:8443"],
    ["a suffix-extended host", "https://shop.example.com.evil.test"],
    ["a subdomain of the allowed host", "https://x.shop.example.com"],
    ["an origin with a path", "https://shop.example.com/path"],
  ])("answers %s with 403 and no CORS allow header", async (_name, origin) => {
    const agent = await liveAgent();
    const res = await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey }, { origin }),
      403,
      "forbidden",
    );
    expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("answers a preflight from an allowed origin with 204 and the allow headers", async () => {
    await liveAgent();
    const res = await api("/v1/agent-sessions", {
      method: "OPTIONS",
      headers: {
        Origin: ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
    expect(res.headers.get("Access-Control-Allow-Methods")).toContain("POST");
    expect(res.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("content-type");
    expect(res.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    expect(res.headers.get("Vary")).toContain("Origin");
  });

  it.each(["https://evil.test", "null"])(
    "answers a preflight from %s without any allow header",
    async (origin) => {
      await liveAgent();
      const res = await api("/v1/agent-sessions", {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
      });
      expect(res.status).toBeLessThan(500);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
      expect(res.headers.get("Access-Control-Allow-Methods")).toBeNull();
    },
  );

  it("stops reflecting an origin once the only agent allowing it is disabled", async () => {
    const origin = `https://only-${crypto.randomUUID().slice(0, 8)}.example.org`;
    const agent = await liveAgent({ agent: { allowedOrigins: [origin] } });
    const preflight = () =>
      api("/v1/agent-sessions", {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
      });
    expect((await preflight()).headers.get("Access-Control-Allow-Origin")).toBe(origin);
    await api(`/v1/agents/${agent.agentId}`, {
      method: "PATCH",
      key: agent.apiKey,
      body: { status: "disabled" },
    });
    expect((await preflight()).headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("matches a single-label wildcard on exactly one label", async () => {
    const agent = await liveAgent({ agent: { allowedOrigins: ["https://*.example.com"] } });
    const ok = await launchRequest({ agentKey: agent.publicKey }, { origin: "https://a.example.com" });
    expect(ok.headers.get("Access-Control-Allow-Origin")).toBe("https://a.example.com");
    const body = await json(ok, 201, launchResponse);
    expect(readToken(body.token).claims.origin).toBe("https://a.example.com");

    for (const origin of [
      "https://a.b.example.com",
      "https://example.com",
      "http://a.example.com",
      "https://.example.com",
    ]) {
      const res = await refusedWithoutTrace(
        agent.tenantId,
        () => launchRequest({ agentKey: agent.publicKey }, { origin }),
        403,
        "forbidden",
      );
      expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
    }
  });
});

describe("request bodies", () => {
  it.each([
    ["text/plain", "text/plain"],
    ["a form", "application/x-www-form-urlencoded"],
    ["multipart", "multipart/form-data; boundary=x"],
  ])("answers %s with 415", async (_name, type) => {
    const agent = await liveAgent();
    await refusedWithoutTrace(
      agent.tenantId,
      () =>
        api("/v1/agent-sessions", {
          method: "POST",
          body: JSON.stringify({ agentKey: agent.publicKey }),
          headers: { "Content-Type": type, Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
        }),
      415,
      "unsupported_media_type",
    );
  });

  it("answers a body over 8 KiB with 413", async () => {
    const agent = await liveAgent();
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey, visitorToken: "x".repeat(8 * 1024) }),
      413,
      "payload_too_large",
    );
  });

  it.each([
    ["invalid JSON", "{"],
    ["an array", "[]"],
    ["null", "null"],
    ["a string", '"pk_abc"'],
    ["deep nesting", `${'{"a":'.repeat(64)}1${"}".repeat(64)}`],
    ["deep arrays", `${"[".repeat(2000)}${"]".repeat(2000)}`],
    ["invalid UTF-8", "\u00ff"],
  ])("answers %s with 400", async (_name, text) => {
    const agent = await liveAgent();
    const body = text === "\u00ff" ? new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) : text;
    await refusedWithoutTrace(
      agent.tenantId,
      () =>
        exports.default.fetch(`${API}/v1/agent-sessions`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
          body,
        }),
      400,
      "bad_request",
    );
  });

  it.each([
    ["an unknown field", { extra: true }],
    ["a client-chosen version", { versionId: "ver_1" }],
    ["a subject on a public launch", { subject: "alice" }],
    ["__proto__", JSON.parse('{"__proto__": {"polluted": true}}')],
    ["a malformed threadId", { threadId: "../../etc" }],
  ])("answers %s with 400", async (_name, extra) => {
    const agent = await liveAgent();
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey, ...extra }),
      400,
      "bad_request",
    );
    expect(Reflect.get({}, "polluted")).toBeUndefined();
  });
});

describe("private agents", () => {
  it("answers a public launch of a private agent with the unknown-key 401", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const res = await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey }),
      401,
      "unauthenticated",
    );
    const unknown = await launchRequest({ agentKey: `pk_${"Q".repeat(26)}` });
    expect(await bodyWithoutRequestId(res)).toEqual(await bodyWithoutRequestId(unknown));
  });

  it("answers another tenant's key with 401, by agent key and by agent id", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await createTenant();
    for (const body of [
      { agentKey: agent.publicKey, subject: "alice" },
      { agentId: agent.agentId, subject: "alice" },
    ]) {
      await refusedWithoutTrace(
        agent.tenantId,
        () => privateLaunchRequest(other.apiKey, body),
        401,
        "unauthenticated",
      );
    }
  });

  it("answers a read-only key with 403", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const readKey = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    await refusedWithoutTrace(
      agent.tenantId,
      () => privateLaunchRequest(readKey.apiKey, { agentId: agent.agentId, subject: "alice" }),
      403,
      "forbidden",
    );
  });

  it("launches for alice with sub = alice and no secret in the response", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const res = await privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice" });
    const text = await res.clone().text();
    const body = await json(res, 201, launchResponse);
    expect(body.visitorToken).toBeUndefined();
    expect(readToken(body.token).claims).toMatchObject({
      sub: "alice",
      tenantId: agent.tenantId,
      agentEntityId: agent.agentId,
      threadId: body.threadId,
      subjectKind: "user",
    });
    for (const secret of [
      agent.apiKey,
      agent.apiKey.split("_").at(-1)!,
      ...Object.values(visitorKeys().keys),
      env.DO_NAME_KEY,
    ]) {
      expect(text).not.toContain(secret);
      expect(JSON.stringify(readToken(body.token))).not.toContain(secret);
    }
    expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();

    // The same launch by agent key works too.
    const byKey = await privateLaunchRequest(agent.apiKey, { agentKey: agent.publicKey, subject: "alice" });
    expect(byKey.status).toBe(201);
  });

  it("tells a backend without an Origin that a public agent's thread needs one; a private agent's works", async () => {
    const open = await liveAgent();
    const publicSession = await json(
      await privateLaunchRequest(open.apiKey, { agentId: open.agentId, subject: "backend-user" }),
      201,
      launchResponse,
    );
    const refused = await upgradeRequest(publicSession.threadId, {
      token: publicSession.token,
      origin: null,
    });
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("forbidden");
    expect(body.error.message).toContain("Origin header");
    expect(body.error.message).toContain("private agent");

    const closed = await liveAgent({ agent: { visibility: "private" } });
    const privateSession = await json(
      await privateLaunchRequest(closed.apiKey, { agentId: closed.agentId, subject: "backend-user" }),
      201,
      launchResponse,
    );
    const upgraded = await upgradeRequest(privateSession.threadId, {
      token: privateSession.token,
      origin: null,
    });
    expect(upgraded.status).toBe(101);
    upgraded.webSocket?.accept();
    upgraded.webSocket?.close(1000);
  });

  it("resumes only for the same subject; another subject gets 404", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const first = await json(
      await privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice" }),
      201,
      launchResponse,
    );
    await refusedWithoutTrace(
      agent.tenantId,
      () =>
        privateLaunchRequest(agent.apiKey, {
          agentId: agent.agentId,
          subject: "bob",
          threadId: first.threadId,
        }),
      404,
      "not_found",
    );
    const again = await json(
      await privateLaunchRequest(agent.apiKey, {
        agentId: agent.agentId,
        subject: "alice",
        threadId: first.threadId,
      }),
      201,
      launchResponse,
    );
    expect(again.threadId).toBe(first.threadId);
  });

  it("answers a body with both agentKey and agentId, or neither, or no subject, with 400", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    for (const body of [
      { agentKey: agent.publicKey, agentId: agent.agentId, subject: "alice" },
      { subject: "alice" },
      { agentId: agent.agentId },
      { agentId: agent.agentId, subject: "" },
      { agentId: agent.agentId, subject: "alice", visitorToken: "x" },
    ]) {
      await refusedWithoutTrace(
        agent.tenantId,
        () => privateLaunchRequest(agent.apiKey, body),
        400,
        "bad_request",
      );
    }
  });
});

describe("abuse limits", () => {
  it("answers 429 with Retry-After past 30 launches a minute per agent key and client IP, storing nothing", async () => {
    const agent = await liveAgent();
    const ip = freshIp();
    // The limiter counts in fixed one-minute windows: a slow run may cross into a fresh window mid-loop, so launch
    // until the window is full (the first 429) and check that at least 30 were let through before it.
    let accepted = 0;
    for (;;) {
      const launched = await launchRequest({ agentKey: agent.publicKey }, { ip });
      if (launched.status === 429) break;
      expect(launched.status).toBe(201);
      accepted += 1;
      expect(accepted).toBeLessThanOrEqual(90);
    }
    expect(accepted).toBeGreaterThanOrEqual(30);
    const res = await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey }, { ip }),
      429,
      "rate_limited",
    );
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
    // X-Forwarded-For does not change who the caller is.
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey }, { ip, headers: { "X-Forwarded-For": freshIp() } }),
      429,
      "rate_limited",
    );
    // Another client IP is unaffected.
    expect((await launchRequest({ agentKey: agent.publicKey })).status).toBe(201);
  });

  it("gives back the quota taken beside a launch the limiter refuses: the day counts exactly the launches admitted", async () => {
    const agent = await liveAgent();
    const ip = freshIp();
    let accepted = 0;
    for (;;) {
      // The first refusal of this tenant in the isolate: its limiter and quota calls ran side by side.
      const launched = await launchRequest({ agentKey: agent.publicKey }, { ip });
      if (launched.status === 429) {
        await expectError(launched, 429, "rate_limited");
        break;
      }
      expect(launched.status).toBe(201);
      accepted += 1;
      expect(accepted).toBeLessThanOrEqual(90);
    }
    const quota = tenantQuota(env, agent.tenantId);
    for (const kind of ["launches", "launches:public", `launches:agent:${agent.agentId}`]) {
      expect(await quota.usage(kind)).toBe(accepted);
    }
    // Later refusals in the window ask the limiter first and never reach the quota; the count stays.
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey }, { ip }),
      429,
      "rate_limited",
    );
    expect(await quota.usage("launches")).toBe(accepted);
  });

  it("limits an IPv6 client by its /64: new addresses in the same /64 do not reset the limit", async () => {
    const agent = await liveAgent();
    const hex = () => Math.floor(Math.random() * 0xffff).toString(16);
    const prefix = `2001:db8:${hex()}:${hex()}`;
    let accepted = 0;
    for (;;) {
      // Every launch from another address of the same /64.
      const launched = await launchRequest(
        { agentKey: agent.publicKey },
        { ip: `${prefix}:${hex()}::${accepted + 1}` },
      );
      if (launched.status === 429) break;
      expect(launched.status).toBe(201);
      accepted += 1;
      expect(accepted).toBeLessThanOrEqual(90);
    }
    expect(accepted).toBeGreaterThanOrEqual(30);
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey }, { ip: `${prefix}:1:2:3:4` }),
      429,
      "rate_limited",
    );
    // The neighbouring /64 is another client.
    const neighbour = `2001:db8:${hex()}:${hex()}::1`;
    expect((await launchRequest({ agentKey: agent.publicKey }, { ip: neighbour })).status).toBe(201);
  });

  it("answers 429 quota_exceeded once the tenant's daily launch quota is used up, consuming nothing", async () => {
    const agent = await liveAgent();
    // Two agents of one tenant: public launches may use only their share of the day, private ones all of it
    // (docs/operations.md, "Launch shares").
    const second = await liveAgent({ tenant: agent });
    const quotaEnv = { TENANT_DAILY_LAUNCH_QUOTA: "2" };
    const send = (agentKey = agent.publicKey) =>
      fetchWithEnv(quotaEnv, "/v1/agent-sessions", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
        body: JSON.stringify({ agentKey }),
      });
    const sendPrivate = (subject: string) =>
      fetchWithEnv(quotaEnv, "/v1/agent-sessions", {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Authorization: `Bearer ${agent.apiKey}`,
          "CF-Connecting-IP": freshIp(),
        },
        body: JSON.stringify({ agentId: second.agentId, subject }),
      });
    expect((await send()).status).toBe(201);
    expect((await sendPrivate("alice")).status).toBe(201);
    for (const refused of [() => send(second.publicKey), () => sendPrivate("bob")]) {
      const res = await refusedWithoutTrace(agent.tenantId, refused, 429, "quota_exceeded");
      expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    }
    expect(await tenantQuota(env, agent.tenantId).usage("launches")).toBe(2);

    // The quota is per tenant: another tenant launches freely under the same limit.
    const other = await liveAgent();
    const otherRes = await fetchWithEnv(quotaEnv, "/v1/agent-sessions", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
      body: JSON.stringify({ agentKey: other.publicKey }),
    });
    expect(otherRes.status).toBe(201);
  });
});
