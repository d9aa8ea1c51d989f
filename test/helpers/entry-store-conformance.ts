// Prism's session-store conformance cases as a reusable suite, run against an entry store living in a thread object.
import { describe, expect, it } from "vitest";
import type { AppendInput, EntryStore } from "../../src/storage/thread/entry-store";

/** The part of the entry store the contract speaks about. */
export type EntryStoreContract = Pick<
  EntryStore,
  "append" | "get" | "branch" | "latestLeaf" | "children" | "count" | "all"
>;

/** What a case may observe besides the store itself. */
export interface StoragePeek {
  outboxCount(): number;
}

/** One thread (one object, its own storage) under test. */
export interface ThreadUnderTest {
  /** Runs `fn` inside the thread with a store opened on its storage; calls may overlap. */
  run<R>(fn: (store: EntryStoreContract, peek: StoragePeek) => R): Promise<R>;
  /** Tears the object down (memory is lost, storage stays), like an eviction or a redeploy. */
  restart(): Promise<void>;
}

/** Makes a new, empty thread each call. */
export type MakeThread = () => ThreadUnderTest;

const label = (id: string, parentId: string | null, extra: Partial<AppendInput> = {}): AppendInput => ({
  id,
  parentId,
  kind: "label",
  body: { label: id },
  ...extra,
});

function ids(entries: readonly { id: string }[]): string[] {
  return entries.map((e) => e.id);
}

export function describeEntryStore(name: string, makeThread: MakeThread): void {
  describe(`${name}: entry store conformance`, () => {
    it("round-trips entries in insertion order with their parent links and bodies", async () => {
      const thread = makeThread();
      const listed = await thread.run((store) => {
        expect(store.append(label("root", null)).ok).toBe(true);
        expect(
          store.append({ id: "child", parentId: "root", kind: "message", role: "user", body: { text: "hi" } })
            .ok,
        ).toBe(true);
        return { all: store.all(), child: store.get("child"), count: store.count() };
      });
      expect(ids(listed.all)).toEqual(["root", "child"]);
      expect(listed.count).toBe(2);
      expect(listed.child).toMatchObject({
        id: "child",
        parentId: "root",
        kind: "message",
        role: "user",
        runId: null,
        body: { text: "hi" },
      });
      expect(listed.all[0]?.parentId).toBeNull();
    });

    it("refuses a duplicate id with a conflict and keeps the original", async () => {
      const thread = makeThread();
      const result = await thread.run((store, peek) => {
        store.append(label("root", null));
        const before = { count: store.count(), outbox: peek.outboxCount() };
        const dup = store.append({ id: "root", parentId: null, kind: "custom", body: { other: true } });
        return {
          dup,
          before,
          after: { count: store.count(), outbox: peek.outboxCount() },
          root: store.get("root"),
        };
      });
      expect(result.dup).toMatchObject({ ok: false, code: "conflict" });
      expect(result.after).toEqual(result.before);
      expect(result.root).toMatchObject({ kind: "label", body: { label: "root" } });
    });

    it("refuses a missing expected parent with a conflict and writes nothing", async () => {
      const thread = makeThread();
      const result = await thread.run((store, peek) => {
        store.append(label("root", null));
        const before = { count: store.count(), outbox: peek.outboxCount() };
        const orphan = store.append(
          label("orphan", "missing", { expectedParentId: "missing", idempotencyKey: "orphan-key" }),
        );
        const dangling = store.append(label("dangling", "also-missing"));
        return {
          orphan,
          dangling,
          before,
          after: { count: store.count(), outbox: peek.outboxCount() },
          stored: [store.get("orphan"), store.get("dangling")],
        };
      });
      expect(result.orphan).toMatchObject({
        ok: false,
        code: "conflict",
        details: { expectedParentId: "missing" },
      });
      expect(result.dangling).toMatchObject({ ok: false, code: "conflict" });
      expect(result.after).toEqual(result.before);
      expect(result.stored).toEqual([null, null]);
      // The refused id was not taken: a valid append with it succeeds later.
      const retry = await thread.run((store) =>
        store.append(label("orphan", "root", { expectedParentId: "root" })),
      );
      expect(retry).toMatchObject({ ok: true, value: { deduplicated: false, entry: { id: "orphan" } } });
    });

    it("deduplicates a retry at the same position, also after a restart", async () => {
      const thread = makeThread();
      const first = await thread.run((store, peek) => {
        store.append(label("root", null));
        const a = store.append(label("idem-a", "root", { idempotencyKey: "k1", expectedParentId: "root" }));
        const before = { count: store.count(), outbox: peek.outboxCount() };
        const dup = store.append(
          label("idem-dup", "root", { idempotencyKey: "k1", expectedParentId: "root" }),
        );
        // A key without an expected parent deduplicates too (its position is "none").
        const noParentA = store.append(label("free-a", "root", { idempotencyKey: "k-free" }));
        const noParentDup = store.append(label("free-dup", "idem-a", { idempotencyKey: "k-free" }));
        return {
          a,
          dup,
          noParentA,
          noParentDup,
          before,
          afterDup: { count: store.count() - 1, outbox: peek.outboxCount() - 1 },
          stored: [store.get("idem-dup"), store.get("free-dup")],
        };
      });
      expect(first.a).toMatchObject({ ok: true, value: { deduplicated: false } });
      expect(first.dup).toMatchObject({ ok: true, value: { deduplicated: true, entry: { id: "idem-a" } } });
      expect(first.noParentA).toMatchObject({ ok: true, value: { deduplicated: false } });
      expect(first.noParentDup).toMatchObject({
        ok: true,
        value: { deduplicated: true, entry: { id: "free-a" } },
      });
      // Only free-a was written after the snapshot.
      expect(first.afterDup).toEqual(first.before);
      expect(first.stored).toEqual([null, null]);

      await thread.restart();
      const afterRestart = await thread.run((store, peek) => {
        const before = { count: store.count(), outbox: peek.outboxCount() };
        const dup = store.append(
          label("idem-dup-2", "root", { idempotencyKey: "k1", expectedParentId: "root" }),
        );
        return { dup, before, after: { count: store.count(), outbox: peek.outboxCount() } };
      });
      expect(afterRestart.dup).toMatchObject({
        ok: true,
        value: { deduplicated: true, entry: { id: "idem-a", parentId: "root" } },
      });
      expect(afterRestart.after).toEqual(afterRestart.before);
    });

    it("allows a fork below an entry that is not the tip", async () => {
      const thread = makeThread();
      const result = await thread.run((store) => {
        store.append(label("root", null));
        store.append(label("child", "root"));
        store.append(label("grandchild", "child"));
        const fork = store.append(label("branch", "root", { expectedParentId: "root" }));
        return { fork, children: ids(store.children("root")), all: ids(store.all()) };
      });
      expect(result.fork).toMatchObject({ ok: true, value: { entry: { id: "branch", parentId: "root" } } });
      expect(result.children).toEqual(["child", "branch"]);
      expect(result.all).toEqual(["root", "child", "grandchild", "branch"]);
    });

    it("treats the same key at a different parent as a new append", async () => {
      const thread = makeThread();
      const result = await thread.run((store) => {
        const a = store.append(label("linear-a", null, { idempotencyKey: "run-1" }));
        const b = store.append(
          label("linear-b", "linear-a", { idempotencyKey: "run-1", expectedParentId: "linear-a" }),
        );
        return { a, b, all: ids(store.all()) };
      });
      expect(result.a).toMatchObject({ ok: true, value: { deduplicated: false } });
      expect(result.b).toMatchObject({ ok: true, value: { deduplicated: false, entry: { id: "linear-b" } } });
      expect(result.all).toEqual(["linear-a", "linear-b"]);
    });

    it("reads a branch root → leaf, paged by keyset cursor without overlap", async () => {
      const thread = makeThread();
      const pages = await thread.run((store) => {
        store.append(label("n0", null));
        for (let i = 1; i < 8; i++) {
          store.append(label(`n${i}`, `n${i - 1}`));
          // Side branches the path must skip.
          store.append(label(`side${i}`, `n${i - 1}`));
        }
        const seen: string[][] = [];
        const cursors: (string | undefined)[] = [];
        let cursor: string | undefined;
        do {
          const page = store.branch("n7", cursor === undefined ? { limit: 3 } : { cursor, limit: 3 });
          if (!page.ok) throw new Error(page.message);
          seen.push(ids(page.value.items));
          cursor = page.value.nextCursor;
          cursors.push(cursor);
        } while (cursor !== undefined && seen.length < 10);
        const whole = store.branch("n7", { limit: 100 });
        return { seen, cursors, whole };
      });
      expect(pages.seen).toEqual([
        ["n0", "n1", "n2"],
        ["n3", "n4", "n5"],
        ["n6", "n7"],
      ]);
      expect(pages.cursors[pages.cursors.length - 1]).toBeUndefined();
      expect(pages.whole).toMatchObject({ ok: true });
      if (pages.whole.ok) {
        expect(ids(pages.whole.value.items)).toEqual(["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"]);
        expect(pages.whole.value.nextCursor).toBeUndefined();
      }
    });

    it("keeps two threads apart", async () => {
      const a = makeThread();
      const b = makeThread();
      await a.run((store) => {
        store.append(label("shared-id", null, { idempotencyKey: "same-key" }));
        store.append(label("only-a", "shared-id"));
      });
      const seenByB = await b.run((store) => ({
        count: store.count(),
        get: store.get("only-a"),
        leaf: store.latestLeaf(),
        // Ids and keys are per thread: B can use the same ones and gets its own entry.
        own: store.append(label("shared-id", null, { idempotencyKey: "same-key", body: { label: "b" } })),
      }));
      expect(seenByB.count).toBe(0);
      expect(seenByB.get).toBeNull();
      expect(seenByB.leaf).toBeNull();
      expect(seenByB.own).toMatchObject({
        ok: true,
        value: { deduplicated: false, entry: { body: { label: "b" } } },
      });
      const seenByA = await a.run((store) => ({ all: ids(store.all()), root: store.get("shared-id") }));
      expect(seenByA.all).toEqual(["shared-id", "only-a"]);
      expect(seenByA.root?.body).toEqual({ label: "shared-id" });
    });

    it("accepts concurrent forks under one parent, each with its own id", async () => {
      const thread = makeThread();
      await thread.run((store) => store.append(label("fork-root", null)));
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          thread.run((store) =>
            store.append({
              parentId: "fork-root",
              expectedParentId: "fork-root",
              kind: "message",
              role: "user",
              body: { text: "fork" },
            }),
          ),
        ),
      );
      const forkIds = results.map((r) => (r.ok ? r.value.entry.id : `failed:${r.code}`));
      expect(new Set(forkIds).size).toBe(6);
      expect(forkIds.every((id) => !id.startsWith("failed:"))).toBe(true);
      const children = await thread.run((store) => ids(store.children("fork-root")));
      expect([...children].sort()).toEqual([...forkIds].sort());
    });

    it("keeps everything across a restart", async () => {
      const thread = makeThread();
      const before = await thread.run((store) => {
        store.append(label("root", null));
        store.append({
          id: "m1",
          parentId: "root",
          kind: "message",
          role: "user",
          runId: "r1",
          body: { text: "a" },
        });
        store.append(label("m2", "m1"));
        return { all: store.all(), leaf: store.latestLeaf() };
      });
      await thread.restart();
      const after = await thread.run((store) => ({
        all: store.all(),
        leaf: store.latestLeaf(),
        count: store.count(),
      }));
      expect(after.all).toEqual(before.all);
      expect(after.leaf).toEqual(before.leaf);
      expect(after.count).toBe(3);
    });
  });
}
