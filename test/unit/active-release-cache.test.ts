// The isolate cache of an agent's active release behind a new thread's launch presentation: fresh hits skip the store,
// expiry, a release activated in this isolate and a missing release do not.
import { describe, expect, it } from "vitest";
import type { Release } from "../../src/control/deployment-store";
import {
  ACTIVE_RELEASE_TTL_MS,
  activeReleaseCached,
  invalidateActiveRelease,
} from "../../src/services/launch/active-release-cache";

const releaseOf = (id: string): Release => ({
  tenantId: "ten_cache",
  id,
  agentId: "agt_cache",
  environment: "development",
  runtimeRevision: "rev",
  allocations: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  activatedAt: "2026-01-01T00:00:00.000Z",
  active: true,
});

function store(initial: Release | null) {
  const s = {
    reads: 0,
    current: initial,
    getActiveRelease: async () => {
      s.reads += 1;
      return s.current;
    },
  };
  return s;
}

const freshAgent = () => `agt_${crypto.randomUUID()}`;

describe("active release cache", () => {
  it("answers repeat and concurrent look-ups from one read until the TTL passes", async () => {
    const s = store(releaseOf("rel_1"));
    const agent = freshAgent();
    const t0 = 1_000_000;
    const [a, b] = await Promise.all([
      activeReleaseCached(s, "ten_cache", agent, "development", t0),
      activeReleaseCached(s, "ten_cache", agent, "development", t0),
    ]);
    expect([a?.id, b?.id, s.reads]).toEqual(["rel_1", "rel_1", 1]);
    s.current = releaseOf("rel_2");
    expect((await activeReleaseCached(s, "ten_cache", agent, "development", t0 + 1_000))?.id).toBe("rel_1");
    const later = t0 + ACTIVE_RELEASE_TTL_MS + 1;
    expect((await activeReleaseCached(s, "ten_cache", agent, "development", later))?.id).toBe("rel_2");
    expect(s.reads).toBe(2);
  });

  it("forgets an agent's release when one is activated in this isolate", async () => {
    const s = store(releaseOf("rel_1"));
    const agent = freshAgent();
    await activeReleaseCached(s, "ten_cache", agent, "development");
    s.current = releaseOf("rel_2");
    invalidateActiveRelease("ten_cache", agent);
    expect((await activeReleaseCached(s, "ten_cache", agent, "development"))?.id).toBe("rel_2");
  });

  it("keeps neither a missing release nor a failed read", async () => {
    const s = store(null);
    const agent = freshAgent();
    expect(await activeReleaseCached(s, "ten_cache", agent, "development")).toBeNull();
    s.current = releaseOf("rel_1");
    expect((await activeReleaseCached(s, "ten_cache", agent, "development"))?.id).toBe("rel_1");
    const failing = { getActiveRelease: () => Promise.reject(new Error("D1 down")) };
    const other = freshAgent();
    await expect(activeReleaseCached(failing, "ten_cache", other, "development")).rejects.toThrow("D1 down");
    const back = store(releaseOf("rel_3"));
    expect((await activeReleaseCached(back, "ten_cache", other, "development"))?.id).toBe("rel_3");
  });
});
