// The isolate cache in front of public agent key look-ups: fresh hits skip the store, expiry and invalidation do not.
import { describe, expect, it } from "vitest";
import type { AgentEntity, LaunchLookup } from "../../src/control/deployment-store";
import {
  AGENT_KEY_CACHE_MAX,
  AGENT_KEY_TTL_MS,
  agentKeyCacheSize,
  findLaunchAgentCached,
  invalidateAgentKeys,
} from "../../src/services/launch/agent-key-cache";

let keyCounter = 0;
function freshKey(): string {
  keyCounter += 1;
  return `pk_unitcache${keyCounter}${crypto.randomUUID().slice(0, 8)}`;
}

function agentFor(publicKey: string, status: AgentEntity["status"] = "active"): AgentEntity {
  return {
    tenantId: "ten_cache",
    id: `agt_${publicKey}`,
    slug: "cache",
    name: "Cache",
    status,
    visibility: "public",
    allowedOrigins: ["https://site.test"],
    publicKey,
    retention: null,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
  };
}

/** A store whose answers can change, counting how often it is asked. */
function countingStore(answer: (key: string) => AgentEntity | null | Error) {
  const store = {
    reads: 0,
    answer,
    /** Whether the agent it answers has an active release. */
    released: true,
    async findLaunchAgent(lookup: LaunchLookup) {
      store.reads += 1;
      await Promise.resolve();
      const a = store.answer("publicKey" in lookup ? lookup.publicKey : lookup.agentId);
      if (a instanceof Error) throw a;
      return a === null ? null : { agent: a, released: store.released };
    },
  };
  return store;
}

/** The cached look-up as a launch makes it, answering the agent alone. */
async function findAgentByPublicKeyCached(
  store: ReturnType<typeof countingStore>,
  key: string,
  now?: number,
): Promise<AgentEntity | null> {
  return (await findLaunchAgentCached(store, key, "development", now))?.agent ?? null;
}

describe("findAgentByPublicKeyCached", () => {
  it("answers from the cache within the TTL and reads again once it has passed", async () => {
    const key = freshKey();
    const store = countingStore((k) => agentFor(k));
    const t0 = 1_000_000;
    expect((await findAgentByPublicKeyCached(store, key, t0))?.publicKey).toBe(key);
    expect((await findAgentByPublicKeyCached(store, key, t0 + AGENT_KEY_TTL_MS - 1))?.publicKey).toBe(key);
    expect(store.reads).toBe(1);

    store.answer = (k) => agentFor(k, "disabled");
    expect((await findAgentByPublicKeyCached(store, key, t0 + AGENT_KEY_TTL_MS))?.status).toBe("disabled");
    expect(store.reads).toBe(2);
  });

  it("shares one read between concurrent misses for the same key", async () => {
    const key = freshKey();
    const store = countingStore((k) => agentFor(k));
    const answers = await Promise.all([1, 2, 3, 4].map(() => findAgentByPublicKeyCached(store, key)));
    expect(answers.map((a) => a?.publicKey)).toEqual([key, key, key, key]);
    expect(store.reads).toBe(1);
  });

  it("never keeps unknown keys, so a guessed key is always checked against the store", async () => {
    const key = freshKey();
    const store = countingStore(() => null);
    const before = agentKeyCacheSize();
    expect(await findAgentByPublicKeyCached(store, key)).toBeNull();
    expect(await findAgentByPublicKeyCached(store, key)).toBeNull();
    expect(store.reads).toBe(2);
    expect(agentKeyCacheSize()).toBe(before);
  });

  it("never keeps an agent without an active release, so an activation anywhere is seen at the next launch", async () => {
    const key = freshKey();
    const store = countingStore((k) => agentFor(k));
    store.released = false;
    expect(await findLaunchAgentCached(store, key, "development")).toMatchObject({ released: false });
    expect(await findLaunchAgentCached(store, key, "development")).toMatchObject({ released: false });
    expect(store.reads).toBe(2);
    store.released = true;
    expect(await findLaunchAgentCached(store, key, "development")).toMatchObject({ released: true });
    expect(await findLaunchAgentCached(store, key, "development")).toMatchObject({ released: true });
    expect(store.reads).toBe(3);
  });

  it("never keeps a failed read", async () => {
    const key = freshKey();
    const store = countingStore(() => new Error("D1 unavailable"));
    await expect(findAgentByPublicKeyCached(store, key)).rejects.toThrow("D1 unavailable");
    store.answer = (k) => agentFor(k);
    expect((await findAgentByPublicKeyCached(store, key))?.publicKey).toBe(key);
    expect(store.reads).toBe(2);
  });

  it("reads the store again after invalidation, within the TTL", async () => {
    const key = freshKey();
    const store = countingStore((k) => agentFor(k));
    await findAgentByPublicKeyCached(store, key);
    store.answer = (k) => agentFor(k, "disabled");
    invalidateAgentKeys(key);
    expect((await findAgentByPublicKeyCached(store, key))?.status).toBe("disabled");
    expect(store.reads).toBe(2);
  });

  it("holds at most AGENT_KEY_CACHE_MAX keys, dropping the oldest first", async () => {
    const store = countingStore((k) => agentFor(k));
    const first = freshKey();
    await findAgentByPublicKeyCached(store, first);
    for (let i = 0; i < AGENT_KEY_CACHE_MAX; i += 1) await findAgentByPublicKeyCached(store, freshKey());
    expect(agentKeyCacheSize()).toBeLessThanOrEqual(AGENT_KEY_CACHE_MAX);
    const reads = store.reads;
    await findAgentByPublicKeyCached(store, first);
    expect(store.reads).toBe(reads + 1);
  });
});
