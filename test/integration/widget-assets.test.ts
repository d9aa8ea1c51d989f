// Static assets through the Worker: cache policy by path, and the headers the demo and test pages depend on.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cacheControlFor, strictCsp } from "../../src/routes/assets";

const get = (path: string) => exports.default.fetch(`http://assets.test${path}`);

describe("cacheControlFor", () => {
  it("caches content-hashed versioned files forever, the loader and channel briefly, pages not at all", () => {
    expect(cacheControlFor("/widget/v1.0.0/widget-abc123.js")).toBe("public, max-age=31536000, immutable");
    expect(cacheControlFor("/widget/v12.3.45/embed-abc123.js")).toBe("public, max-age=31536000, immutable");
    expect(cacheControlFor("/widget/v1/widget.js")).toBe("public, max-age=300");
    expect(cacheControlFor("/embed.js")).toBe("public, max-age=300");
    expect(cacheControlFor("/widget/manifest.json")).toBe("public, max-age=300");
    expect(cacheControlFor("/demo.html")).toBe("no-cache");
  });
});

describe("asset routes", () => {
  it("serve the demo page as HTML, revalidated on every load", async () => {
    const res = await get("/demo.html");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    expect(res.headers.get("Cache-Control")).toBe("no-cache");
    expect(await res.text()).toContain('src="/embed.js"');
  });

  it("serve the strict-CSP page with a policy that allows no inline code and enforces Trusted Types", async () => {
    const res = await get("/test/strict-csp.html");
    expect(res.status).toBe(200);
    const csp = res.headers.get("Content-Security-Policy");
    expect(csp).toBe(strictCsp("http://assets.test/test/strict-csp.html"));
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).toContain("connect-src 'self' ws://assets.test");
    expect(csp).not.toContain("unsafe-inline");
  });

  it("serve the COEP page cross-origin isolated", async () => {
    const res = await get("/test/coep.html");
    expect(res.status).toBe(200);
    expect(res.headers.get("Cross-Origin-Embedder-Policy")).toBe("require-corp");
    expect(res.headers.get("Cross-Origin-Opener-Policy")).toBe("same-origin");
  });

  it("serve each bundled translation as immutable, CORS-open JSON listed in the manifest", async () => {
    const manifest = z
      .object({ version: z.string(), locales: z.record(z.string(), z.object({ path: z.string() })) })
      .parse(await (await get("/widget/manifest.json")).json());
    expect(Object.keys(manifest.locales).sort()).toEqual(["de", "es", "fr", "ja", "pt"]);
    const res = await get(manifest.locales.es!.path);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("application/json");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(z.object({ send: z.string() }).parse(await res.json()).send).toBe("Enviar mensaje");
    const widget = await (await get(`/widget/v${manifest.version.split(".")[0]}/widget.js`)).text();
    expect(widget).toContain(manifest.locales.es!.path);
  });

  it("serve the past conversations list as an immutable, CORS-open module the widget names", async () => {
    const manifest = z
      .object({ version: z.string(), lazy: z.object({ pastView: z.object({ path: z.string() }) }) })
      .parse(await (await get("/widget/manifest.json")).json());
    const { path } = manifest.lazy.pastView;
    expect(path).toMatch(
      new RegExp(`^/widget/v${manifest.version.replaceAll(".", "\\.")}/past-[0-9a-f]{10}\\.js$`),
    );
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("javascript");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(await res.text()).toContain("/v1/me/threads");
    const widget = await (await get(`/widget/v${manifest.version.split(".")[0]}/widget.js`)).text();
    expect(widget).toContain(path);
    expect(widget).not.toContain("/v1/me/threads");
  });

  it("answer a missing asset with the JSON 404 envelope", async () => {
    const res = await get("/widget/v0.0.1/missing.js");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
  });

  it("serve nothing outside the asset paths", async () => {
    const res = await get("/index.html");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
  });
});
