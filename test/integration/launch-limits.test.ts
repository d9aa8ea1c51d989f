// Launch abuse limits: indexed origin look-ups, preflight and failed-launch limits per client network, each agent's
// share of the tenant's day, and backend launches limited per subject with refreshes that take no quota.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { app } from "../../src/app";
import { tenantQuota } from "../../src/auth/tenant-quota";
import {
  allThreadRows,
  fetchWithEnv,
  privateLaunchRequest,
  refusedWithoutTrace,
  tenantFootprint,
} from "../helpers/edge-gate";
import { API, api, createTenant, expectError, json } from "../helpers/tenants";
import { freshIp, launchRequest, launchResponse, liveAgent, ORIGIN } from "../helpers/threads";

const short = () => crypto.randomUUID().slice(0, 8);

function preflight(origin: string, ip: string): Promise<Response> {
  return api("/v1/agent-sessions", {
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": "POST", "CF-Connecting-IP": ip },
  });
}

/** The SQL statements a request prepares on D1, and the request's response. */
async function recordSql(request: Request): Promise<{ res: Response; statements: string[] }> {
  const statements: string[] = [];
  const db = new Proxy(env.DB, {
    get(target, property) {
      if (property === "prepare") {
        return (sql: string) => {
          statements.push(sql);
          return target.prepare(sql);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const ctx = createExecutionContext();
  const res = await app.fetch(request, { ...env, DB: db }, ctx);
  await waitOnExecutionContext(ctx);
  return { res, statements };
}

const planRow = z.object({ detail: z.string() });

/** `EXPLAIN QUERY PLAN` of a statement, its parameters bound to placeholder text. */
async function queryPlan(sql: string): Promise<string[]> {
  const numbered = [...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
  const count = numbered.length > 0 ? Math.max(...numbered) : (sql.match(/\?/g) ?? []).length;
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...Array.from({ length: count }, (_, i) => `https://p${i}.example.com`))
    .all();
  return results.map((row) => planRow.parse(row).detail);
}

describe("origin look-ups before any credential", () => {
  it("answers a preflight through the agent_origins index: no statement scans a table", async () => {
    await liveAgent({ agent: { allowedOrigins: ["https://*.indexed.example.com", ORIGIN] } });
    for (const origin of [
      ORIGIN,
      "https://a.indexed.example.com",
      `https://unknown-${short()}.example.net`,
    ]) {
      const { res, statements } = await recordSql(
        new Request(`${API}/v1/agent-sessions`, {
          method: "OPTIONS",
          headers: { Origin: origin, "Access-Control-Request-Method": "POST", "CF-Connecting-IP": freshIp() },
        }),
      );
      expect(res.status).toBe(204);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBe(origin.includes("unknown") ? null : origin);
      expect(statements.length).toBeGreaterThan(0);
      for (const sql of statements) {
        const plan = await queryPlan(sql);
        expect(plan.join("\n")).toContain("agent_origins_by_origin");
        expect(
          plan.filter((detail) => detail.startsWith("SCAN")),
          `${sql}\n${plan.join("\n")}`,
        ).toEqual([]);
      }
    }
  });

  it("finds exact and single-label wildcard origins, and follows every write of an agent's origins", async () => {
    const id = short();
    const exact = `https://shop-${id}.example.org`;
    const agent = await liveAgent({ agent: { allowedOrigins: [exact, `https://*.w-${id}.example.org`] } });
    const allowed = async (origin: string) =>
      (await preflight(origin, freshIp())).headers.get("Access-Control-Allow-Origin") === origin;

    expect(await allowed(exact)).toBe(true);
    expect(await allowed(`https://a.w-${id}.example.org`)).toBe(true);
    expect(await allowed(`https://a.b.w-${id}.example.org`)).toBe(false);
    expect(await allowed(`https://w-${id}.example.org`)).toBe(false);
    expect(await allowed(`http://a.w-${id}.example.org`)).toBe(false);

    const moved = `https://moved-${id}.example.org`;
    const patch = (body: Record<string, unknown>) =>
      api(`/v1/agents/${agent.agentId}`, { method: "PATCH", key: agent.apiKey, body });
    expect((await patch({ allowedOrigins: [moved] })).status).toBe(200);
    expect(await allowed(exact)).toBe(false);
    expect(await allowed(`https://a.w-${id}.example.org`)).toBe(false);
    expect(await allowed(moved)).toBe(true);
    // A patch of other fields keeps the index as it is.
    expect((await patch({ name: "Renamed" })).status).toBe(200);
    expect(await allowed(moved)).toBe(true);
    expect((await patch({ status: "disabled" })).status).toBe(200);
    expect(await allowed(moved)).toBe(false);
  });

  it("writes an agent and its origin rows together: a refused create leaves no origin row", async () => {
    const tenant = await createTenant();
    const slug = `dup-${short()}`;
    const first = `https://first-${short()}.example.org`;
    const second = `https://second-${short()}.example.org`;
    const create = (origin: string) =>
      api("/v1/agents", {
        method: "POST",
        key: tenant.apiKey,
        body: { slug, name: "Dup", visibility: "public", allowedOrigins: [origin] },
      });
    expect((await create(first)).status).toBe(201);
    await expectError(await create(second), 409, "conflict");
    const rows = await env.DB.prepare("SELECT origin FROM agent_origins WHERE tenant_id = ?")
      .bind(tenant.tenantId)
      .all();
    expect(rows.results).toEqual([{ origin: first }]);
  });

  it("backfills the index from agents stored before it existed (migration 0006)", async () => {
    const tenant = await createTenant();
    const id = short();
    await env.DB.prepare(
      `INSERT INTO agents (tenant_id, id, slug, name, status, visibility, allowed_origins, public_key, created_at,
         updated_at) VALUES (?, ?, ?, 'Legacy', 'active', 'public', ?, ?, ?, ?)`,
    )
      .bind(
        tenant.tenantId,
        `agt_legacy${id}`,
        `legacy-${id}`,
        JSON.stringify([`https://legacy-${id}.example.org`, `https://*.legacy-w-${id}.example.org`]),
        `pk_legacy${id}${short()}`,
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
      )
      .run();
    const migration = (env.TEST_MIGRATIONS ?? []).find((m) => m.name.startsWith("0006_"));
    const backfill =
      migration?.queries.filter((q) => q.includes("INSERT OR IGNORE INTO agent_origins")) ?? [];
    expect(backfill).toHaveLength(1);
    for (const query of backfill) await env.DB.prepare(query).run();

    for (const origin of [`https://legacy-${id}.example.org`, `https://x.legacy-w-${id}.example.org`]) {
      expect((await preflight(origin, freshIp())).headers.get("Access-Control-Allow-Origin")).toBe(origin);
    }
  });
});

describe("preflights per client network", () => {
  it("answers 429 + Retry-After once one network has sent too many preflights with ever-new Origins", async () => {
    await liveAgent();
    const ip = freshIp();
    let answered = 0;
    let refused: Response | undefined;
    // Fixed one-minute windows: send until the first 429 rather than assuming all fit in one window.
    while (refused === undefined) {
      const res = await preflight(`https://probe-${short()}.example.net`, ip);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
      if (res.status === 429) refused = res;
      else {
        expect(res.status).toBe(204);
        answered += 1;
        expect(answered).toBeLessThanOrEqual(90);
      }
    }
    expect(answered).toBeGreaterThanOrEqual(30);
    await expectError(refused, 429, "rate_limited");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);

    // The limit is the network's: a legitimate preflight from another client still gets its allow headers.
    const legit = await preflight(ORIGIN, freshIp());
    expect(legit.status).toBe(204);
    expect(legit.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
    expect(legit.headers.get("Access-Control-Allow-Methods")).toContain("POST");
  });

  it("answers a repeated unknown Origin from memory: it costs no look-up and counts against no limit", async () => {
    const ip = freshIp();
    const origin = `https://repeat-${short()}.example.net`;
    for (let i = 0; i < 40; i++) {
      const res = await preflight(origin, ip);
      expect(res.status).toBe(204);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
    }
    // The network's budget is untouched but for the first look-up: its allowed-origin preflight is answered.
    expect((await preflight(ORIGIN, ip)).headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
  });
});

describe("failed launches per client network", () => {
  it("answers 429 once one network has failed too many launches, then refuses its launches before any work", async () => {
    const agent = await liveAgent();
    const ip = freshIp();
    let failed = 0;
    for (;;) {
      const res = await launchRequest(
        { agentKey: `pk_guess${short()}${short()}` },
        { ip, origin: `https://probe-${short()}.example.net` },
      );
      if (res.status === 429) {
        await expectError(res, 429, "rate_limited");
        expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
        break;
      }
      await expectError(res, 401, "unauthenticated");
      failed += 1;
      expect(failed).toBeLessThanOrEqual(90);
    }
    expect(failed).toBeGreaterThanOrEqual(30);

    // For the rest of the window even a valid launch from that network is refused, storing and consuming nothing.
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchRequest({ agentKey: agent.publicKey }, { ip }),
      429,
      "rate_limited",
    );
    // Other networks are unaffected, and so is a tenant's backend that shares the blocked address.
    expect((await launchRequest({ agentKey: agent.publicKey })).status).toBe(201);
    const backend = await privateLaunchRequest(
      agent.apiKey,
      { agentId: agent.agentId, subject: "alice" },
      { ip },
    );
    expect(backend.status).toBe(201);
    const forged = await privateLaunchRequest(
      `sk_${short()}_${"x".repeat(43)}`,
      { subject: "alice" },
      { ip },
    );
    await expectError(forged, 429, "rate_limited");
  });

  it("never counts an authenticated backend's failed launches against the address it serves from", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const ip = freshIp();
    for (let i = 0; i < 40; i++) {
      const res = await privateLaunchRequest(
        agent.apiKey,
        { agentId: agent.agentId, subject: `user-${i}`, threadId: `thr_${"0".repeat(32)}` },
        { ip },
      );
      await expectError(res, 404, "not_found");
    }
    const ok = await privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice" }, { ip });
    expect(ok.status).toBe(201);
  });
});

/** A launch under a daily quota of `quota` launches per tenant. */
function launchUnderQuota(
  quota: number,
  body: Record<string, unknown>,
  options: { apiKey?: string; ip?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "CF-Connecting-IP": options.ip ?? freshIp(),
  };
  if (options.apiKey !== undefined) headers.Authorization = `Bearer ${options.apiKey}`;
  else headers.Origin = ORIGIN;
  return fetchWithEnv({ TENANT_DAILY_LAUNCH_QUOTA: String(quota) }, "/v1/agent-sessions", {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
}

describe("each agent's share of the tenant's daily launches, and the private reserve", () => {
  it("refuses public launches past the public share, then still admits the tenant's private launches", async () => {
    const abused = await liveAgent();
    const other = await liveAgent({ tenant: abused });
    // A daily quota of 4 with the defaults: 2 kept for private launches, so 2 public ones, at most 2 per agent.
    for (let i = 0; i < 2; i++)
      expect((await launchUnderQuota(4, { agentKey: abused.publicKey })).status).toBe(201);
    const refused = await refusedWithoutTrace(
      abused.tenantId,
      () => launchUnderQuota(4, { agentKey: abused.publicKey }),
      429,
      "quota_exceeded",
    );
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    // The public share is used up for every agent of the tenant, from any network.
    for (let i = 0; i < 3; i++) {
      await refusedWithoutTrace(
        abused.tenantId,
        () => launchUnderQuota(4, { agentKey: other.publicKey }),
        429,
        "quota_exceeded",
      );
    }
    const quota = tenantQuota(env, abused.tenantId);
    expect(await quota.usage("launches")).toBe(2);
    expect(await quota.usage("launches:public")).toBe(2);
    expect(await quota.usage(`launches:agent:${abused.agentId}`)).toBe(2);

    // The tenant's backend still has the reserve: two private launches, then the day is used up for them too.
    for (const subject of ["alice", "bob"]) {
      const res = await launchUnderQuota(4, { agentId: other.agentId, subject }, { apiKey: other.apiKey });
      expect(res.status, await res.text()).toBe(201);
    }
    await refusedWithoutTrace(
      abused.tenantId,
      () => launchUnderQuota(4, { agentId: other.agentId, subject: "carol" }, { apiKey: other.apiKey }),
      429,
      "quota_exceeded",
    );
    expect(await quota.usage("launches")).toBe(4);
  });

  it("lets private launches use the whole day, the public share included", async () => {
    const agent = await liveAgent();
    for (let i = 0; i < 3; i++) {
      const res = await launchUnderQuota(
        3,
        { agentId: agent.agentId, subject: `user-${i}` },
        { apiKey: agent.apiKey },
      );
      expect(res.status, await res.text()).toBe(201);
    }
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchUnderQuota(3, { agentKey: agent.publicKey }),
      429,
      "quota_exceeded",
    );
  });
});

describe("backend launches per subject, and refreshes", () => {
  it("launches for 120 different users from one backend address, all 201", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const ip = freshIp();
    for (let i = 0; i < 120; i++) {
      const res = await privateLaunchRequest(
        agent.apiKey,
        { agentId: agent.agentId, subject: `user-${i}` },
        { ip },
      );
      expect(res.status).toBe(201);
    }
  }, 120_000);

  it("answers 429 past 30 launches a minute for one user, from any address, storing and consuming nothing", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const send = (subject: string) => privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject });
    let accepted = 0;
    for (;;) {
      const res = await send("alice");
      if (res.status === 429) break;
      expect(res.status).toBe(201);
      accepted += 1;
      expect(accepted).toBeLessThanOrEqual(90);
    }
    expect(accepted).toBeGreaterThanOrEqual(30);
    const refused = await refusedWithoutTrace(agent.tenantId, () => send("alice"), 429, "rate_limited");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect((await send("bob")).status).toBe(201);
  });

  it("refreshes a token for an existing thread without spending the daily quota (backend and browser)", async () => {
    const agent = await liveAgent();
    const user = await json(
      await launchUnderQuota(2, { agentId: agent.agentId, subject: "alice" }, { apiKey: agent.apiKey }),
      201,
      launchResponse,
    );
    const visitor = await json(await launchUnderQuota(2, { agentKey: agent.publicKey }), 201, launchResponse);
    const quota = tenantQuota(env, agent.tenantId);
    expect(await quota.usage("launches")).toBe(2);

    // The day's quota is used up: new threads are refused...
    await refusedWithoutTrace(
      agent.tenantId,
      () => launchUnderQuota(2, { agentId: agent.agentId, subject: "bob" }, { apiKey: agent.apiKey }),
      429,
      "quota_exceeded",
    );
    // ...refreshes of existing ones are not, and take nothing.
    const rows = await allThreadRows();
    for (let i = 0; i < 3; i++) {
      const refreshedUser = await json(
        await launchUnderQuota(
          2,
          { agentId: agent.agentId, subject: "alice", threadId: user.threadId },
          { apiKey: agent.apiKey },
        ),
        201,
        launchResponse,
      );
      expect(refreshedUser.threadId).toBe(user.threadId);
      const refreshedVisitor = await json(
        await launchUnderQuota(2, {
          agentKey: agent.publicKey,
          threadId: visitor.threadId,
          visitorToken: visitor.visitorToken,
        }),
        201,
        launchResponse,
      );
      expect(refreshedVisitor.threadId).toBe(visitor.threadId);
    }
    expect(await quota.usage("launches")).toBe(2);
    expect(await quota.usage(`launches:agent:${agent.agentId}`)).toBe(1);
    expect(await allThreadRows()).toBe(rows);
  });

  it("still limits refreshes per visitor: one visitor refreshing from ever-new addresses gets 429", async () => {
    const agent = await liveAgent();
    const first = await json(await launchRequest({ agentKey: agent.publicKey }), 201, launchResponse);
    const refresh = () =>
      launchRequest({
        agentKey: agent.publicKey,
        threadId: first.threadId,
        visitorToken: first.visitorToken,
      });
    let accepted = 0;
    for (;;) {
      const res = await refresh();
      if (res.status === 429) break;
      expect(res.status).toBe(201);
      accepted += 1;
      expect(accepted).toBeLessThanOrEqual(90);
    }
    expect(accepted).toBeGreaterThanOrEqual(30);
    await refusedWithoutTrace(agent.tenantId, refresh, 429, "rate_limited");
    expect(await tenantFootprint(agent.tenantId)).toEqual({ threads: 1, launches: 1 });
  });
});
