// The entry store on a real thread object: Prism's conformance cases plus outbox, redaction, leaves and scale.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { projectedEntrySeq, projectionBacklog } from "../../src/storage/projection/outbox";
import { type AppendInput, EntryStore } from "../../src/storage/thread/entry-store";
import { applyThreadRetention } from "../../src/storage/thread/thread-retention";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { describeEntryStore, type MakeThread } from "../helpers/entry-store-conformance";
import { rowsReadBy } from "../helpers/rows-read";

let tick = Date.UTC(2026, 0, 1);
const now = () => tick++;

const newThread = () => env.THREAD.get(env.THREAD.idFromName(`entry-store-${crypto.randomUUID()}`));

function openStore(storage: DurableObjectStorage, secrets: string[] = []): EntryStore {
  migrateThreadSchema(storage);
  return new EntryStore(storage, { now, secrets });
}

function outboxRows(storage: DurableObjectStorage) {
  return storage.sql.exec("SELECT kind, ref_id, version, payload_json FROM outbox ORDER BY seq").toArray();
}

const makeThread: MakeThread = () => {
  const stub = newThread();
  return {
    run: (fn) =>
      runInDurableObject(stub, (_instance, state) =>
        fn(openStore(state.storage), { outboxCount: () => projectionBacklog(state.storage) }),
      ),
    restart: () => evictDurableObject(stub),
  };
};

describeEntryStore("Durable Object SQLite", makeThread);

const msg = (id: string, parentId: string | null, text = id): AppendInput => ({
  id,
  parentId,
  kind: "message",
  role: "user",
  body: { text },
});

describe("EntryStore", () => {
  it("queues each entry for D1 by the entry watermark, without copying it into the outbox", async () => {
    const queued = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage);
      store.append(msg("root", null));
      store.append({ ...msg("reply", "root", "hello"), role: "assistant", runId: "run-1" });
      return {
        outbox: outboxRows(state.storage),
        watermark: projectedEntrySeq(state.storage),
        waiting: store.all({ afterSeq: projectedEntrySeq(state.storage) }).map((e) => e.id),
        backlog: projectionBacklog(state.storage),
      };
    });
    expect(queued).toEqual({ outbox: [], watermark: 0, waiting: ["root", "reply"], backlog: 2 });
  });

  it("redacts secrets and key-shaped strings before anything is stored", async () => {
    const secret = "tenant-provider-secret-123";
    const stored = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage, [secret]);
      const appended = store.append({
        id: "tool-out",
        parentId: null,
        kind: "custom",
        body: {
          echo: `the key is ${secret}!`,
          headers: { authorization: "Bearer abcdefghijklmnop.qrstu" },
          nested: [{ [secret]: "sk_live_0123456789abcdefABCDEF" }],
        },
      });
      const raw = state.storage.sql.exec("SELECT body_json FROM entries WHERE id = 'tool-out'").one();
      return { appended, raw: String(raw.body_json) };
    });
    expect(stored.appended).toMatchObject({
      ok: true,
      value: {
        entry: {
          body: {
            echo: "the key is [REDACTED]!",
            headers: { authorization: "Bearer [REDACTED]" },
            nested: [{ "[REDACTED]": "[REDACTED]" }],
          },
        },
      },
    });
    expect(stored.raw).not.toContain(secret);
    expect(stored.raw).not.toContain("sk_live_");
    expect(stored.raw).not.toContain("abcdefghijklmnop");
  });

  it("refuses malformed appends and a parent that contradicts expectedParentId, writing nothing", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage);
      store.append(msg("root", null));
      store.append(msg("other", "root"));
      const before = { count: store.count(), outbox: outboxRows(state.storage).length };
      const refused = [
        store.append({ ...msg("x1", "root"), expectedParentId: "other" }),
        store.append({ id: "x2", parentId: "root", kind: "system" as AppendInput["kind"], body: {} }),
        store.append({ ...msg("", "root") }),
        store.append({ ...msg("x3", "root"), idempotencyKey: "k".repeat(257) }),
      ];
      return { refused, before, after: { count: store.count(), outbox: outboxRows(state.storage).length } };
    });
    expect(result.refused.map((r) => (r.ok ? "ok" : r.code))).toEqual([
      "bad_request",
      "bad_request",
      "bad_request",
      "bad_request",
    ]);
    expect(result.after).toEqual(result.before);
  });

  it("answers bad cursors, bad limits and unknown leaves without reading the tree", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage);
      store.append(msg("root", null));
      return [
        store.branch("nope"),
        store.branch("root", { cursor: "abc" }),
        store.branch("root", { cursor: "-1" }),
        store.branch("root", { limit: 0 }),
        store.branch("root", { limit: 1001 }),
        store.branch("root", { limit: 1.5 }),
      ].map((r) => (r.ok ? "ok" : r.code));
    });
    expect(result).toEqual([
      "not_found",
      "bad_request",
      "bad_request",
      "bad_request",
      "bad_request",
      "bad_request",
    ]);
  });

  it("follows the newest leaf, or the selected one, which moves down with appends below it", async () => {
    const stub = newThread();
    const steps = await runInDurableObject(stub, (_i, state) => {
      const store = openStore(state.storage);
      const leaf = () => store.latestLeaf()?.id ?? null;
      const seen: (string | null)[] = [leaf()];
      store.append(msg("root", null));
      store.append(msg("a1", "root"));
      store.append(msg("a2", "a1"));
      seen.push(leaf()); // a2
      store.append(msg("b1", "root"));
      seen.push(leaf()); // newest childless: b1
      const selected = store.setActiveLeaf("a2");
      seen.push(leaf()); // a2, selected
      store.append(msg("c1", "b1"));
      seen.push(leaf()); // still a2: c1 is not below the selected leaf
      store.append(msg("a3", "a2"));
      seen.push(leaf()); // a3: the selection moved down
      return { seen, selected: selected.ok, missing: store.setActiveLeaf("missing") };
    });
    expect(steps.seen).toEqual([null, "a2", "b1", "a2", "a2", "a3"]);
    expect(steps.selected).toBe(true);
    expect(steps.missing).toMatchObject({ ok: false, code: "not_found" });

    await evictDurableObject(stub);
    const afterRestart = await runInDurableObject(stub, (_i, state) => {
      const store = openStore(state.storage);
      const selected = store.latestLeaf()?.id;
      store.setActiveLeaf(null);
      return { selected, newest: store.latestLeaf()?.id };
    });
    expect(afterRestart).toEqual({ selected: "a3", newest: "a3" });
  });

  it("answers a cursor at or past the leaf with an empty page, and an unknown leaf as not found", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage);
      store.append(msg("p1", null));
      const leaf = store.append(msg("p2", "p1"));
      const seq = leaf.ok ? leaf.value.entry.seq : 0;
      return [
        store.branch("p2", { cursor: String(seq) }),
        store.branch("p2", { cursor: String(seq + 5) }),
        store.branch("p9", { cursor: String(seq) }),
        store.branch("p2", { cursor: String(seq - 1) }),
      ];
    });
    expect(result.map((r) => (r.ok ? r.value : r.code))).toEqual([
      { items: [] },
      { items: [] },
      "not_found",
      { items: [expect.objectContaining({ id: "p2" })] },
    ]);
  });

  it("refuses to return a stored row that lost the entry shape, naming the column and not the value", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage);
      store.append(msg("good", null));
      store.append(msg("bent", "good"));
      store.append(msg("tip", "bent"));
      state.storage.sql.exec("UPDATE entries SET role = 'wizard-secret' WHERE id = 'bent'");
      const attempt = (read: () => unknown) => {
        try {
          read();
          return "returned";
        } catch (error) {
          return error instanceof Error ? error.message : String(error);
        }
      };
      return {
        good: store.get("good")?.id,
        get: attempt(() => store.get("bent")),
        branch: attempt(() => store.branch("tip")),
        all: attempt(() => store.all()),
        untouched: state.storage.sql.exec("SELECT role FROM entries WHERE id = 'bent'").one().role,
      };
    });
    expect(result.good).toBe("good");
    for (const message of [result.get, result.branch, result.all]) {
      expect(message).toMatch(/^entries row seq=2: role /);
      expect(message).not.toContain("wizard-secret");
    }
    expect(result.untouched).toBe("wizard-secret");
  });

  it("lists all entries in insertion order after a seq", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage);
      store.append(msg("e1", null));
      store.append(msg("e2", "e1"));
      store.append(msg("e3", "e1"));
      store.append(msg("e4", "e2"));
      const first = store.all({ limit: 2 });
      const rest = store.all({ afterSeq: first[first.length - 1]?.seq ?? 0, limit: 10 });
      return { first: first.map((e) => e.id), rest: rest.map((e) => e.id) };
    });
    expect(result).toEqual({ first: ["e1", "e2"], rest: ["e3", "e4"] });
  });

  // A generous timeout: inserting 10,000 entries can take several seconds on a busy machine.
  it("reads one leaf's branch out of a 10,000-entry thread with 50 forks", { timeout: 60_000 }, async () => {
    const stub = newThread();
    const read = await runInDurableObject(stub, (_i, state) => {
      const store = openStore(state.storage);
      state.storage.transactionSync(() => {
        const must = (input: AppendInput) => {
          const r = store.append(input);
          if (!r.ok) throw new Error(r.message);
        };
        must(msg("c0", null));
        for (let i = 1; i < 9950; i++) {
          must(msg(`c${i}`, `c${i - 1}`));
          // Forks below older entries, interleaved with the chain so seq alone cannot tell a path.
          if (i % 198 === 0) must(msg(`f${i / 198}`, `c${i - 50}`));
        }
      });
      const readAll = (leafId: string) => {
        const out: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = store.branch(leafId, cursor === undefined ? { limit: 1000 } : { cursor, limit: 1000 });
          if (!page.ok) throw new Error(page.message);
          out.push(...page.value.items.map((e) => e.id));
          cursor = page.value.nextCursor;
          pages++;
        } while (cursor !== undefined && pages < 50);
        return { ids: out, pages };
      };
      return {
        count: store.count(),
        fork25: readAll("f25"),
        main: readAll("c9949"),
        leaf: store.latestLeaf()?.id,
        forkChildren: store.children("c4900").map((e) => e.id),
      };
    });
    expect(read.count).toBe(10_000);
    expect(read.leaf).toBe("c9949");
    expect(read.forkChildren).toEqual(["c4901", "f25"]);
    const chain = (to: number) => Array.from({ length: to + 1 }, (_, i) => `c${i}`);
    expect(read.fork25.ids).toEqual([...chain(4900), "f25"]);
    expect(read.fork25.pages).toBe(5);
    expect(read.main.ids).toEqual(chain(9949));
    expect(read.main.pages).toBe(10);
  });

  it("reads a page of a 5,000-entry branch touching about as many rows as the page holds", {
    timeout: 60_000,
  }, async () => {
    const read = await runInDurableObject(newThread(), (_i, state) => {
      const store = openStore(state.storage);
      state.storage.transactionSync(() => {
        store.append(msg("c0", null));
        for (let i = 1; i < 5000; i++) {
          store.append(msg(`c${i}`, `c${i - 1}`));
          if (i % 500 === 0) store.append(msg(`side${i}`, `c${i - 10}`));
        }
      });
      const ids = (r: ReturnType<EntryStore["branch"]>) => (r.ok ? r.value.items.map((e) => e.id) : r.code);
      const first = rowsReadBy(state.storage, () => store.branch("c4999", { limit: 50 }));
      const cursor = first.value.ok ? first.value.value.nextCursor : undefined;
      const second = rowsReadBy(state.storage, () => store.branch("c4999", { cursor, limit: 50 }));
      const c2500 = store.get("c2500")?.seq ?? 0;
      const middle = rowsReadBy(state.storage, () =>
        store.branch("c4999", { cursor: String(c2500), limit: 50 }),
      );
      // A seq that is not on this path (a side branch's entry, written just after c2500): the page starts at the
      // first entry of the path written after it.
      const side = store.get("side2500")?.seq ?? 0;
      const offPath = rowsReadBy(state.storage, () =>
        store.branch("c4999", { cursor: String(side), limit: 3 }),
      );
      return {
        first: { ids: ids(first.value), rows: first.rows },
        second: { ids: ids(second.value), rows: second.rows },
        middle: { ids: ids(middle.value), rows: middle.rows },
        offPath: { ids: ids(offPath.value), rows: offPath.rows },
      };
    });
    const chain = (from: number, n: number) => Array.from({ length: n }, (_, i) => `c${from + i}`);
    expect(read.first.ids).toEqual(chain(0, 50));
    expect(read.second.ids).toEqual(chain(50, 50));
    expect(read.middle.ids).toEqual(chain(2501, 50));
    expect(read.offPath.ids).toEqual(chain(2501, 3));
    // Walking the whole branch read about three rows per entry (15,000); a page now reads a few per entry it
    // returns, plus a logarithmic walk to find where it starts.
    for (const page of [read.first, read.second, read.middle]) expect(page.rows).toBeLessThan(600);
    expect(read.offPath.rows).toBeLessThan(3000);
  });

  it("pages every branch of a random tree exactly as its parent links say, also after retention re-roots it", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed % n;
      };
      const store = openStore(state.storage);
      const parents = new Map<string, string | null>();
      state.storage.transactionSync(() => {
        for (let i = 0; i < 600; i++) {
          const ids = [...parents.keys()];
          // Mostly below one of the newest entries (long branches), sometimes anywhere, a few new roots.
          const pick = random(10);
          const parent =
            ids.length === 0 || pick === 0
              ? null
              : pick < 8
                ? (ids[ids.length - 1 - random(Math.min(3, ids.length))] ?? null)
                : (ids[random(ids.length)] ?? null);
          store.append({ ...msg(`n${i}`, parent), body: { text: `n${i}` } });
          parents.set(`n${i}`, parent);
        }
      });
      const pathTo = (leaf: string) => {
        const path: string[] = [];
        for (let at: string | null = leaf; at !== null; at = parents.get(at) ?? null) path.unshift(at);
        return path;
      };
      const paged = (leaf: string, limit: number) => {
        const out: string[] = [];
        let cursor: string | undefined;
        do {
          const page = store.branch(leaf, { limit, ...(cursor !== undefined ? { cursor } : {}) });
          if (!page.ok) return [page.code];
          out.push(...page.value.items.map((e) => e.id));
          cursor = page.value.nextCursor;
        } while (cursor !== undefined);
        return out;
      };
      const mismatches: string[] = [];
      const check = (label: string) => {
        for (let k = 0; k < 40; k++) {
          const ids = [...parents.keys()];
          const leaf = ids[random(ids.length)] ?? "";
          const limit = 1 + random(40);
          const expected = pathTo(leaf);
          const got = paged(leaf, limit);
          if (JSON.stringify(got) !== JSON.stringify(expected)) mismatches.push(`${label} ${leaf}/${limit}`);
          const lineage = store.lineage(leaf, 25).map((e) => e.id);
          if (JSON.stringify(lineage) !== JSON.stringify(expected.slice(-25).reverse()))
            mismatches.push(`${label} lineage ${leaf}`);
        }
      };
      check("before");
      // Keep the newest 250 messages: older entries go and the survivors below them become roots.
      applyThreadRetention(state.storage, { maxMessagesPerThread: 250 }, Date.now());
      const kept = new Set(store.all({ limit: 1000 }).map((e) => e.id));
      for (const id of [...parents.keys()]) {
        if (!kept.has(id)) parents.delete(id);
        else if (!kept.has(parents.get(id) ?? "")) parents.set(id, null);
      }
      check("after retention");
      return { mismatches, kept: kept.size };
    });
    expect(result.kept).toBe(250);
    expect(result.mismatches).toEqual([]);
  });
});
