// The origin look-up's negative cache: an origin no agent allows is answered from memory for its TTL, then asked again.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetUnknownOrigins, originKnown, UNKNOWN_ORIGIN_TTL_MS } from "../../src/http/origin-lookup";
import { liveAgent } from "../helpers/threads";

const short = () => crypto.randomUUID().slice(0, 8);

/** Another isolate's write: the index row appears without this isolate's agent routes seeing it. */
async function allowElsewhere(agent: { tenantId: string; agentId: string }, origin: string) {
  await env.DB.prepare("INSERT INTO agent_origins (tenant_id, agent_id, origin) VALUES (?, ?, ?)")
    .bind(agent.tenantId, agent.agentId, origin)
    .run();
}

describe("unknown origins in memory", () => {
  it("answers an unknown origin from memory until its TTL ends, without a read or a limiter call", async () => {
    const agent = await liveAgent();
    const origin = `https://late-${short()}.example.org`;
    let reads = 0;
    const beforeRead = async () => {
      reads += 1;
    };
    const start = Date.now();
    expect(await originKnown(env.DB, origin, { now: start, beforeRead })).toBe(false);
    expect(reads).toBe(1);

    await allowElsewhere(agent, origin);
    // Stale on purpose, for at most the TTL: the documented price of not reading D1 per probe.
    expect(await originKnown(env.DB, origin, { now: start + UNKNOWN_ORIGIN_TTL_MS - 1, beforeRead })).toBe(
      false,
    );
    expect(reads).toBe(1);
    expect(await originKnown(env.DB, origin, { now: start + UNKNOWN_ORIGIN_TTL_MS, beforeRead })).toBe(true);
    expect(reads).toBe(2);
    // A known origin is never remembered: every answer for it is read afresh.
    expect(await originKnown(env.DB, origin, { now: start + UNKNOWN_ORIGIN_TTL_MS, beforeRead })).toBe(true);
    expect(reads).toBe(3);
  });

  it("forgets unknown origins when this isolate writes an agent", async () => {
    const agent = await liveAgent();
    const origin = `https://new-${short()}.example.org`;
    const now = Date.now();
    expect(await originKnown(env.DB, origin, { now })).toBe(false);
    await allowElsewhere(agent, origin);
    expect(await originKnown(env.DB, origin, { now })).toBe(false);
    forgetUnknownOrigins();
    expect(await originKnown(env.DB, origin, { now })).toBe(true);
  });

  it("lets the limiter refuse before a read, and skips both for a string that is not an origin", async () => {
    let reads = 0;
    const refuse = async () => {
      reads += 1;
      throw new Error("limited");
    };
    await expect(
      originKnown(env.DB, `https://x-${short()}.example.org`, { beforeRead: refuse }),
    ).rejects.toThrow("limited");
    for (const notAnOrigin of [
      "null",
      "https://*.example.org",
      "https://a.example.org/path",
      "x".repeat(5000),
    ]) {
      expect(await originKnown(env.DB, notAnOrigin, { beforeRead: refuse })).toBe(false);
    }
    expect(reads).toBe(1);
  });
});
