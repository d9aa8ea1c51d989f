// The playground's widget frame page: served under /console/ with the console's policy, so the console (and only
// a page of this origin) may frame it, and the embed loader it loads is allowed by that policy.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { consoleCsp } from "../../src/routes/assets";

const get = (path: string) => exports.default.fetch(`http://assets.test${path}`);

describe("GET /console/playground-frame", () => {
  it("answers the frame page, which loads the embed loader, under the console's CSP", async () => {
    const res = await get("/console/playground-frame");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    const csp = res.headers.get("Content-Security-Policy");
    expect(csp).toBe(consoleCsp("http://assets.test/console/playground-frame"));
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(res.headers.get("X-Frame-Options")).toBe("SAMEORIGIN");
    const html = await res.text();
    expect(html).toContain('<script src="/embed.js"></script>');
    // Not the console app: the frame carries only the widget.
    expect(html).not.toContain("/console/assets/main-");
  });

  it("leaves every other console path to the app's page", async () => {
    const html = await (await get("/console/agents/agt_1/playground")).text();
    expect(html).toContain("/console/assets/main-");
    expect(html).not.toContain("/embed.js");
  });
});
