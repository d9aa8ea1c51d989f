// The console's cookie session (docs/api.md): sign-in with an API key, the cookie's attributes, the admin API on the
// cookie plus X-Console-CSRF from the Worker's own origin only, read-only keys, sign-out, expiry and revocation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { pruneConsoleSessions } from "../../src/jobs/console-sessions";
import { consoleSessionResponse } from "../../src/shared/console-api";
import {
  API,
  api,
  countRows,
  createApiKey,
  createTenant,
  expectError,
  json,
  operatorHeaders,
  type TestTenant,
  unique,
} from "../helpers/tenants";
import { freshIp } from "../helpers/threads";

const OWN_ORIGIN = new URL(API).origin;

interface SignedIn {
  cookie: string;
  csrf: string;
  body: z.infer<typeof consoleSessionResponse>;
  setCookie: string;
}

function signInRequest(apiKey: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api("/v1/console/session", {
    method: "POST",
    body: { apiKey },
    headers: {
      Origin: OWN_ORIGIN,
      "Sec-Fetch-Site": "same-origin",
      "CF-Connecting-IP": freshIp(),
      ...headers,
    },
  });
}

async function signIn(apiKey: string): Promise<SignedIn> {
  const res = await signInRequest(apiKey);
  const setCookie = res.headers.get("Set-Cookie") ?? "";
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  const body = await json(res, 201, consoleSessionResponse);
  const value = setCookie.match(/^__Host-console=([^;]+);/)?.[1];
  expect(value, setCookie).toBeDefined();
  return { cookie: `__Host-console=${value}`, csrf: body.csrfToken, body, setCookie };
}

/** A request as the console's page makes it: its cookie, its CSRF header, from the Worker's own origin. */
function consoleRequest(
  path: string,
  session: { cookie: string; csrf?: string },
  options: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    Cookie: session.cookie,
    "Sec-Fetch-Site": "same-origin",
    ...(options.method !== undefined && options.method !== "GET" ? { Origin: OWN_ORIGIN } : {}),
    ...(session.csrf !== undefined ? { "X-Console-CSRF": session.csrf } : {}),
    ...(options.headers ?? {}),
  };
  return api(path, {
    ...(options.method !== undefined ? { method: options.method } : {}),
    ...(options.body !== undefined ? { body: options.body } : {}),
    headers,
  });
}

const newAgent = () => ({
  slug: unique("agent"),
  name: "Console agent",
  visibility: "public",
  allowedOrigins: ["https://shop.example.com"],
});

async function tenantWithKey(): Promise<TestTenant & { keyId: string }> {
  const tenant = await createTenant();
  const keys = await json(
    await api("/v1/api-keys", { key: tenant.apiKey }),
    200,
    z.object({ items: z.array(z.object({ id: z.string() })) }),
  );
  return { ...tenant, keyId: keys.items[0]!.id };
}

describe("POST /v1/console/session", () => {
  it("exchanges an API key for an HttpOnly, Secure, SameSite=Strict __Host- cookie of 12 hours", async () => {
    const tenant = await tenantWithKey();
    const before = Date.now();
    const { body, setCookie } = await signIn(tenant.apiKey);
    const attributes = setCookie.split(";").map((part) => part.trim());
    expect(attributes[0]).toMatch(/^__Host-console=cs_[a-z2-7]{26}_[a-z2-7]{52}$/);
    expect(attributes.slice(1).sort()).toEqual(
      ["HttpOnly", "Max-Age=43200", "Path=/", "SameSite=Strict", "Secure"].sort(),
    );
    expect(setCookie).not.toMatch(/Domain=/i);
    expect(body).toMatchObject({ tenantId: tenant.tenantId, keyId: tenant.keyId, scope: "admin" });
    expect(body.tenantName).toMatch(/^tenant-/);
    const expiresAt = Date.parse(body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 43_200_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 43_200_000);
    // The API key and the session secret are nowhere in D1: the row holds a digest.
    const secret = attributes[0]!.split("_").at(-1)!;
    const rows = await env.DB.prepare("SELECT * FROM console_sessions WHERE tenant_id = ?")
      .bind(tenant.tenantId)
      .all();
    expect(rows.results).toHaveLength(1);
    const stored = JSON.stringify(rows.results);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(tenant.apiKey);
  });

  it("answers a wrong, revoked or malformed key with the uniform 401 and no cookie", async () => {
    const tenant = await createTenant();
    const wrong = `${tenant.apiKey.slice(0, -4)}aaaa`;
    for (const apiKey of [wrong, "sk_nonsense", `Bearer ${tenant.apiKey}`]) {
      const res = await signInRequest(apiKey);
      expect(res.headers.get("Set-Cookie")).toBeNull();
      expect(res.headers.get("Cache-Control")).toBe("no-store");
      const error = await expectError(res, 401, "unauthenticated");
      expect(error.message).toBe("A valid API key is required.");
    }
    expect(await countRows("console_sessions", tenant.tenantId)).toBe(0);
  });

  it("refuses a sign-in from another origin or another site, storing nothing", async () => {
    const tenant = await createTenant();
    const refused: Record<string, string>[] = [
      { Origin: "https://evil.example" },
      { Origin: OWN_ORIGIN, "Sec-Fetch-Site": "cross-site" },
      { Origin: OWN_ORIGIN, "Sec-Fetch-Site": "same-site" },
    ];
    for (const headers of refused) {
      const res = await signInRequest(tenant.apiKey, headers);
      expect(res.headers.get("Set-Cookie")).toBeNull();
      await expectError(res, 403, "forbidden");
    }
    expect(await countRows("console_sessions", tenant.tenantId)).toBe(0);
  });

  it("limits failed sign-ins per client network, then refuses that network's sign-ins", async () => {
    const tenant = await createTenant();
    const ip = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
    let failed = 0;
    let limited: Response | undefined;
    while (failed < 100) {
      const res = await signInRequest(`${tenant.apiKey.slice(0, -4)}bbbb`, { "CF-Connecting-IP": ip });
      if (res.status === 429) {
        limited = res;
        break;
      }
      expect(res.status).toBe(401);
      failed += 1;
    }
    expect(failed).toBeGreaterThanOrEqual(30);
    await expectError(limited!, 429, "rate_limited");
    expect(limited!.headers.get("Retry-After")).toBe("60");
    // Even the right key is refused from that network for the window; from another network it signs in.
    const blocked = await signInRequest(tenant.apiKey, { "CF-Connecting-IP": ip });
    await expectError(blocked, 429, "rate_limited");
    expect((await signIn(tenant.apiKey)).body.tenantId).toBe(tenant.tenantId);
  });
});

describe("GET /v1/console/session", () => {
  it("answers the same session, CSRF token included, for the cookie alone", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    const res = await consoleRequest("/v1/console/session", { cookie: session.cookie });
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(await json(res, 200, consoleSessionResponse)).toEqual(session.body);
  });

  it("is 204 without a cookie (a first load logs no error) and 401 with one that names no session", async () => {
    const none = await api("/v1/console/session", { headers: { "Sec-Fetch-Site": "same-origin" } });
    expect(none.status).toBe(204);
    expect(await none.text()).toBe("");
    const tenant = await createTenant();
    const { cookie } = await signIn(tenant.apiKey);
    const forged = `${cookie.slice(0, -4)}aaaa`;
    await expectError(
      await consoleRequest("/v1/console/session", { cookie: forged }),
      401,
      "unauthenticated",
    );
  });

  it("gives the session and its CSRF token only to the console's own pages", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    const read = (headers: Record<string, string>) =>
      api("/v1/console/session", { headers: { Cookie: session.cookie, ...headers } });
    const refused: Record<string, string>[] = [
      {},
      { "Sec-Fetch-Site": "cross-site" },
      { "Sec-Fetch-Site": "same-site" },
      { "Sec-Fetch-Site": "none" },
      { Origin: "http://evil.invalid" },
      { Origin: "http://evil.invalid", "Sec-Fetch-Site": "same-origin" },
      { Origin: OWN_ORIGIN, "Sec-Fetch-Site": "cross-site" },
      { Origin: "null" },
    ];
    for (const headers of refused) {
      const res = await read(headers);
      const text = await res.text();
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(text)).toMatchObject({ error: { code: "forbidden" } });
      expect(text).not.toContain(session.csrf);
    }
    const allowed: Record<string, string>[] = [{ "Sec-Fetch-Site": "same-origin" }, { Origin: OWN_ORIGIN }];
    for (const headers of allowed) {
      expect((await json(await read(headers), 200, consoleSessionResponse)).csrfToken).toBe(session.csrf);
    }
  });
});

describe("the admin API on the console cookie", () => {
  it("works on GET and POST with the CSRF header from the Worker's own origin", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    const created = await consoleRequest("/v1/agents", session, { method: "POST", body: newAgent() });
    const agent = await json(created, 201, z.object({ id: z.string() }));
    const listed = await json(
      await consoleRequest("/v1/agents", session),
      200,
      z.object({ items: z.array(z.object({ id: z.string() })) }),
    );
    expect(listed.items.map((a) => a.id)).toEqual([agent.id]);
    // Other tenant-admin routes too: usage, API keys, sessions.
    for (const path of ["/v1/usage", "/v1/api-keys", "/v1/sessions", "/v1/analytics", "/v1/holds"]) {
      expect((await consoleRequest(path, session)).status, path).toBe(200);
    }
  });

  it("refuses a request without the CSRF header, with a wrong one, or from another site, changing nothing", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    const attempts: [string, { csrf?: string; headers?: Record<string, string> }][] = [
      ["no CSRF header", {}],
      ["a wrong CSRF token", { csrf: `${session.csrf.slice(0, -2)}xx` }],
      ["another session's CSRF token", { csrf: (await signIn(tenant.apiKey)).csrf }],
      ["a cross-site Origin", { csrf: session.csrf, headers: { Origin: "https://evil.example" } }],
      ["Sec-Fetch-Site: cross-site", { csrf: session.csrf, headers: { "Sec-Fetch-Site": "cross-site" } }],
      ["Sec-Fetch-Site: same-site", { csrf: session.csrf, headers: { "Sec-Fetch-Site": "same-site" } }],
    ];
    for (const [what, attempt] of attempts) {
      const request = {
        cookie: session.cookie,
        ...(attempt.csrf !== undefined ? { csrf: attempt.csrf } : {}),
      };
      const post = await consoleRequest("/v1/agents", request, {
        method: "POST",
        body: newAgent(),
        headers: attempt.headers ?? {},
      });
      await expectError(post, 403, "forbidden").catch((error) => {
        throw new Error(`${what}: ${error}`);
      });
      const get = await consoleRequest("/v1/agents", request, { headers: attempt.headers ?? {} });
      expect(get.status, what).toBe(403);
    }
    expect(await countRows("agents", tenant.tenantId)).toBe(0);
  });

  it("lets an Authorization header decide when both are sent", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    const res = await consoleRequest("/v1/agents", session, {
      method: "POST",
      body: newAgent(),
      headers: { Authorization: "Bearer sk_wrong" },
    });
    await expectError(res, 401, "unauthenticated");
    expect(await countRows("agents", tenant.tenantId)).toBe(0);
  });

  it("gives a read key's session the key's scope: it reads, and every write is 403", async () => {
    const tenant = await createTenant();
    const read = await createApiKey(tenant, "read");
    const session = await signIn(read.apiKey);
    expect(session.body.scope).toBe("read");
    expect(session.body.keyId).toBe(read.id);
    expect((await consoleRequest("/v1/agents", session)).status).toBe(200);
    const write = await consoleRequest("/v1/agents", session, { method: "POST", body: newAgent() });
    const error = await expectError(write, 403, "forbidden");
    expect(error.message).toBe("This API key is read-only.");
    expect(await countRows("agents", tenant.tenantId)).toBe(0);
  });
});

describe("a session's end", () => {
  it("signs out with DELETE (CSRF required): the cookie is cleared and stops working", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    const refused = await consoleRequest(
      "/v1/console/session",
      { cookie: session.cookie },
      { method: "DELETE" },
    );
    await expectError(refused, 403, "forbidden");
    expect((await consoleRequest("/v1/agents", session)).status).toBe(200);

    const res = await consoleRequest("/v1/console/session", session, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const cleared = res.headers.get("Set-Cookie") ?? "";
    expect(cleared).toMatch(/^__Host-console=;/);
    expect(cleared).toContain("Max-Age=0");
    expect(cleared).toContain("Path=/");
    expect(cleared).toContain("Secure");

    await expectError(await consoleRequest("/v1/agents", session), 401, "unauthenticated");
    await expectError(
      await consoleRequest("/v1/console/session", { cookie: session.cookie }),
      401,
      "unauthenticated",
    );
    const again = await consoleRequest("/v1/console/session", session, { method: "DELETE" });
    expect(again.headers.get("Set-Cookie")).toContain("Max-Age=0");
    await expectError(again, 401, "unauthenticated");
  });

  it("is 401 once expired, and the scheduled job deletes the expired row", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    await env.DB.prepare("UPDATE console_sessions SET expires_at = ? WHERE tenant_id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), tenant.tenantId)
      .run();
    await expectError(await consoleRequest("/v1/agents", session), 401, "unauthenticated");
    await expectError(
      await consoleRequest("/v1/console/session", { cookie: session.cookie }),
      401,
      "unauthenticated",
    );
    expect(await pruneConsoleSessions(env, Date.now())).toBeGreaterThanOrEqual(1);
    expect(await countRows("console_sessions", tenant.tenantId)).toBe(0);
  });

  it("ends at once when its API key is revoked", async () => {
    const tenant = await createTenant();
    const other = await createApiKey(tenant, "admin");
    const session = await signIn(other.apiKey);
    expect((await consoleRequest("/v1/agents", session)).status).toBe(200);
    const revoked = await api(`/v1/api-keys/${other.id}`, { method: "DELETE", key: tenant.apiKey });
    expect(revoked.status).toBe(204);
    await expectError(await consoleRequest("/v1/agents", session), 401, "unauthenticated");
    await expectError(
      await consoleRequest("/v1/console/session", { cookie: session.cookie }),
      401,
      "unauthenticated",
    );
  });

  it("ends at once when the operator disables the tenant", async () => {
    const tenant = await createTenant();
    const session = await signIn(tenant.apiKey);
    const disabled = await api(`/v1/operator/tenants/${tenant.tenantId}`, {
      method: "PATCH",
      headers: operatorHeaders(),
      body: { status: "disabled" },
    });
    expect(disabled.status).toBe(200);
    await expectError(await consoleRequest("/v1/agents", session), 401, "unauthenticated");
    await expectError(
      await consoleRequest("/v1/console/session", { cookie: session.cookie }),
      401,
      "unauthenticated",
    );
  });
});
