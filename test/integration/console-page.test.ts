// The console's page through the Worker: every console path answers the app's page under the console's strict
// policy, and its built files are immutable.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { consoleCsp } from "../../src/routes/assets";

const get = (path: string) => exports.default.fetch(`http://console.test${path}`);

describe("console page", () => {
  it.each(["/console", "/console/", "/console/agents", "/console/sessions/th_1"])(
    "%s answers the app page with the console's CSP and no caching",
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toContain("text/html");
      expect(res.headers.get("Cache-Control")).toBe("no-cache");
      expect(res.headers.get("Content-Security-Policy")).toBe(consoleCsp(`http://console.test${path}`));
      expect(res.headers.get("X-Frame-Options")).toBe("SAMEORIGIN");
      expect(await res.text()).toMatch(
        /<script type="module" src="\/console\/assets\/main-[\w-]+\.js"><\/script>/,
      );
    },
  );

  it("allows no inline code, enforces Trusted Types, and refuses framing by other origins", () => {
    const csp = consoleCsp("https://agents.example.com/console/");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("connect-src 'self' wss://agents.example.com");
  });

  it("serves the built entry as immutable JavaScript", async () => {
    const page = await (await get("/console/")).text();
    const entry = /src="(\/console\/assets\/main-[\w-]+\.js)"/.exec(page)?.[1];
    expect(entry).toBeDefined();
    const res = await get(entry!);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("javascript");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
  });

  it("answers 404 for a built file that does not exist", async () => {
    const res = await get("/console/assets/main-missing.js");
    expect(res.status).toBe(404);
  });
});
