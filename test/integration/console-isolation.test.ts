// Nothing but the console runs on the console's origin: demo and test pages only in development (and never on a
// console host of its own), a loopback-only test service, a CSP on every HTML answer, CONSOLE_HOST routing.
/// <reference types="vite/client" />
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { FALLBACK_HTML_CSP, htmlPolicy } from "../../src/http/html-policy";
import { consoleSessionResponse } from "../../src/shared/console-api";
import { createTenant, expectError, json } from "../helpers/tenants";
import { freshIp } from "../helpers/threads";

const API_ORIGIN = "http://api.test";
const CONSOLE_ORIGIN = "http://console.test";

/** One request to the Worker with `overrides` on top of the test env. */
async function fetchAs(
  overrides: Partial<Record<keyof Env, string>>,
  url: string,
  init: RequestInit = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(url, init), { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** Every HTML file the Worker's assets hold, as the path it is requested at. */
const HTML_PATHS = Object.keys(import.meta.glob("../../public/**/*.html")).map((file) =>
  file.replace("../../public", ""),
);
const DEVELOPMENT_PAGES = [
  "/demo.html",
  "/demo/demo.js",
  "/test/widget.html",
  "/test/customer.html",
  "/test/boot.js",
];

/** The sources of one CSP directive, or null when the policy lacks it. */
function directive(csp: string, name: string): string[] | null {
  const found = csp
    .split(";")
    .map((part) => part.trim().split(/\s+/))
    .find(([first]) => first === name);
  return found === undefined ? null : found.slice(1);
}

describe("demo and test pages", () => {
  it.each(["staging", "production"])("answer the JSON 404 in %s", async (environment) => {
    for (const path of DEVELOPMENT_PAGES) {
      const res = await fetchAs(
        { ENVIRONMENT: environment },
        `${API_ORIGIN}${path}?service=http://evil.invalid`,
      );
      await expectError(res, 404, "not_found");
    }
  });

  it("are served in development, on every host but a console host of its own", async () => {
    for (const path of DEVELOPMENT_PAGES) {
      expect((await fetchAs({}, `${API_ORIGIN}${path}`)).status, path).toBe(200);
      expect((await fetchAs({ CONSOLE_HOST: "console.test" }, `${API_ORIGIN}${path}`)).status, path).toBe(
        200,
      );
      const onConsole = await fetchAs({ CONSOLE_HOST: "console.test" }, `${CONSOLE_ORIGIN}${path}`);
      await expectError(onConsole, 404, "not_found");
    }
  });

  it("keep the widget, the loader and the icon in every environment", async () => {
    for (const path of ["/embed.js", "/widget/manifest.json", "/favicon.svg"]) {
      expect((await fetchAs({ ENVIRONMENT: "production" }, `${API_ORIGIN}${path}`)).status, path).toBe(200);
    }
  });
});

describe("the HTML policy", () => {
  it("is on every HTML page served, and no script-src allows inline code", async () => {
    expect(HTML_PATHS).toEqual(
      expect.arrayContaining(["/demo.html", "/test/customer.html", "/console/index.html"]),
    );
    let served = 0;
    for (const path of [...HTML_PATHS, "/console/", "/console/playground-frame"]) {
      const res = await fetchAs({}, `${API_ORIGIN}${path}`);
      if (res.status === 404) continue;
      expect(res.headers.get("Content-Type"), path).toContain("text/html");
      const csp = res.headers.get("Content-Security-Policy") ?? "";
      expect(directive(csp, "script-src"), `${path}: ${csp}`).toEqual(["'self'"]);
      expect(csp, path).not.toContain("unsafe-inline");
      expect(csp, path).not.toContain("unsafe-eval");
      served += 1;
    }
    expect(served).toBeGreaterThanOrEqual(7);
  });

  it("lets the customer page load scripts from a loopback service only", async () => {
    const page = async (service: string) => {
      const url = `${API_ORIGIN}/test/customer.html?service=${encodeURIComponent(service)}`;
      return (await fetchAs({}, url)).headers.get("Content-Security-Policy") ?? "";
    };
    for (const service of [
      "http://evil.invalid",
      "https://127.0.0.1.evil.invalid",
      "javascript:alert(1)",
      "nope",
    ]) {
      const csp = await page(service);
      expect(directive(csp, "script-src"), service).toEqual(["'self'"]);
      expect(directive(csp, "connect-src"), service).toEqual(["'self'", "ws://api.test"]);
    }
    const csp = await page("http://127.0.0.1:8787/anything");
    expect(directive(csp, "script-src")).toEqual(["'self'", "http://127.0.0.1:8787"]);
    expect(directive(csp, "connect-src")).toEqual([
      "'self'",
      "http://127.0.0.1:8787",
      "ws://api.test",
      "ws://127.0.0.1:8787",
    ]);
  });

  it("gives any HTML answer without a policy of its own one that runs nothing", async () => {
    const pages = new Hono()
      .use("*", htmlPolicy)
      .get("/bare", (c) => c.html("<script>alert(1)</script>"))
      .get("/own", (c) => c.html("<p>x</p>", 200, { "Content-Security-Policy": "default-src 'self'" }))
      .get("/json", (c) => c.json({ ok: true }));
    const bare = await pages.request("/bare");
    expect(bare.headers.get("Content-Security-Policy")).toBe(FALLBACK_HTML_CSP);
    expect(await bare.text()).toBe("<script>alert(1)</script>");
    expect((await pages.request("/own")).headers.get("Content-Security-Policy")).toBe("default-src 'self'");
    expect((await pages.request("/json")).headers.get("Content-Security-Policy")).toBeNull();
  });
});

/** Signs in on `origin` (with CONSOLE_HOST as given) and returns the cookie. */
async function signIn(overrides: Partial<Record<keyof Env, string>>, origin: string): Promise<string> {
  const tenant = await createTenant();
  const res = await fetchAs(overrides, `${origin}/v1/console/session`, {
    method: "POST",
    body: JSON.stringify({ apiKey: tenant.apiKey }),
    headers: {
      "Content-Type": "application/json",
      Origin: origin,
      "Sec-Fetch-Site": "same-origin",
      "CF-Connecting-IP": freshIp(),
    },
  });
  await json(res, 201, consoleSessionResponse);
  const value = res.headers.get("Set-Cookie")?.match(/^__Host-console=([^;]+);/)?.[1];
  expect(value).toBeDefined();
  return `__Host-console=${value}`;
}

describe("CONSOLE_HOST", () => {
  const onItsHost = { CONSOLE_HOST: "console.test" };

  it("serves the console and its session routes on that host only", async () => {
    for (const path of ["/console", "/console/", "/console/agents", "/console/playground-frame"]) {
      const own = await fetchAs(onItsHost, `${CONSOLE_ORIGIN}${path}`);
      expect(own.status, path).toBe(200);
      expect(own.headers.get("Content-Security-Policy"), path).toContain("script-src 'self'");
      await expectError(await fetchAs(onItsHost, `${API_ORIGIN}${path}`), 404, "not_found");
    }
    const cookie = await signIn(onItsHost, CONSOLE_ORIGIN);
    const session = await fetchAs(onItsHost, `${CONSOLE_ORIGIN}/v1/console/session`, {
      headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin" },
    });
    expect((await json(session, 200, consoleSessionResponse)).csrfToken).not.toBe("");
    const elsewhere = await fetchAs(onItsHost, `${API_ORIGIN}/v1/console/session`, {
      headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin" },
    });
    await expectError(elsewhere, 404, "not_found");
    const signInElsewhere = await fetchAs(onItsHost, `${API_ORIGIN}/v1/console/session`, {
      method: "POST",
      body: JSON.stringify({ apiKey: "sk_whatever" }),
      headers: { "Content-Type": "application/json", Origin: API_ORIGIN, "Sec-Fetch-Site": "same-origin" },
    });
    await expectError(signInElsewhere, 404, "not_found");
  });

  it("takes the console cookie as a credential on that host only", async () => {
    const cookie = await signIn(onItsHost, CONSOLE_ORIGIN);
    const session = await fetchAs(onItsHost, `${CONSOLE_ORIGIN}/v1/console/session`, {
      headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin" },
    });
    const { csrfToken } = await json(session, 200, consoleSessionResponse);
    const agents = (origin: string) =>
      fetchAs(onItsHost, `${origin}/v1/agents`, {
        headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin", "X-Console-CSRF": csrfToken },
      });
    expect((await agents(CONSOLE_ORIGIN)).status).toBe(200);
    await expectError(await agents(API_ORIGIN), 401, "unauthenticated");
  });

  it("leaves the console on every host while it is empty", async () => {
    for (const origin of [API_ORIGIN, CONSOLE_ORIGIN]) {
      expect((await fetchAs({}, `${origin}/console/`)).status, origin).toBe(200);
    }
  });
});
