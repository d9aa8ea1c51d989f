import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("GET /v1/health", () => {
  it("answers ok with the environment and build", async () => {
    const res = await exports.default.fetch("http://api.test/v1/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", environment: "development", version: "dev" });
    expect(res.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers unknown routes with a JSON not_found", async () => {
    const res = await exports.default.fetch("http://api.test/v1/nope");
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe("not_found");
    expect(body.error.requestId).toBe(res.headers.get("X-Request-Id"));
  });

  it("does not mount the SDK's default /agents routes", async () => {
    const res = await exports.default.fetch("http://api.test/agents/thread-agent/some-name");
    expect(res.status).toBe(404);
  });
});
