// Thread schema migrations: fresh install, upgrade from an older schema with data, rollback and refusal.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { projectedEntrySeq } from "../../src/storage/projection/outbox";
import {
  adoptThreadContext,
  readContextVersion,
  readThreadContext,
} from "../../src/storage/thread/context-store";
import { EntryStore } from "../../src/storage/thread/entry-store";
import { readRunAudit } from "../../src/storage/thread/run-audit-store";
import { RunStore } from "../../src/storage/thread/run-store";
import {
  migrateThreadSchema,
  THREAD_MIGRATIONS,
  THREAD_SCHEMA_VERSION,
  threadSchemaVersion,
} from "../../src/storage/thread/thread-schema";
import { UsageStore } from "../../src/storage/thread/usage-store";

const now = () => Date.UTC(2026, 0, 2);
const newThread = () => env.THREAD.get(env.THREAD.idFromName(`thread-schema-${crypto.randomUUID()}`));

const OUR_TABLES = [
  "append_idempotency",
  "attachments",
  "context_versions",
  "entries",
  "feedback",
  "meta",
  "outbox",
  "pin",
  "queued_turns",
  "run_actions",
  "run_chunks",
  "run_parks",
  "runs",
  "thread_events",
  "thread_versions",
  "tool_calls",
  "usage",
];

/** Tables an older schema had and a later migration dropped. */
const RETIRED_TABLES = ["run_events"];

/** Empties an object of our tables, as it was before any build of ours ran (the SDK's tables stay). */
function wipeThreadTables(storage: DurableObjectStorage): void {
  storage.transactionSync(() => {
    for (const table of [...OUR_TABLES, ...RETIRED_TABLES]) storage.sql.exec(`DROP TABLE IF EXISTS ${table}`);
  });
}

function schemaObjects(storage: DurableObjectStorage): { tables: string[]; indexes: string[] } {
  const rows = storage.sql
    .exec("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
    .toArray();
  const names = (type: string) =>
    rows
      .filter((r) => r.type === type)
      .map((r) => String(r.name))
      .sort();
  return { tables: names("table"), indexes: names("index") };
}

describe("thread schema migrations", () => {
  it("is an append-only list numbered 1..n, with v1 the base schema and a later version on top", () => {
    expect(THREAD_MIGRATIONS.map((m) => m.version)).toEqual(
      Array.from({ length: THREAD_MIGRATIONS.length }, (_, i) => i + 1),
    );
    expect(THREAD_SCHEMA_VERSION).toBe(THREAD_MIGRATIONS.length);
    expect(THREAD_SCHEMA_VERSION).toBeGreaterThanOrEqual(2);
  });

  it("creates every table on a fresh object, records the version and never uses the SDK's cf_ prefix", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      wipeThreadTables(state.storage);
      const before = threadSchemaVersion(state.storage);
      const applied = migrateThreadSchema(state.storage);
      const again = migrateThreadSchema(state.storage);
      return {
        before,
        applied,
        again,
        version: threadSchemaVersion(state.storage),
        ...schemaObjects(state.storage),
      };
    });
    expect(result.before).toBe(0);
    expect(result.applied).toBe(THREAD_SCHEMA_VERSION);
    expect(result.again).toBe(THREAD_SCHEMA_VERSION);
    expect(result.version).toBe(THREAD_SCHEMA_VERSION);
    const ours = result.tables.filter((t) => !t.startsWith("cf_"));
    expect(ours).toEqual(OUR_TABLES);
    // Whatever else lives here is the SDK's own (cf_agents_*, cf_agent_*), never ours.
    expect(result.tables.filter((t) => t.startsWith("cf_")).every((t) => t.startsWith("cf_agent"))).toBe(
      true,
    );
    expect(result.indexes).toEqual(expect.arrayContaining(["tool_calls_run_id"]));
    // Migration 3 dropped the outbox index again, migration 4 the entries-by-run index, migration 5 run_events,
    // migration 15 the entries-by-parent index.
    expect(result.indexes).not.toContain("entries_parent_id");
    expect(result.indexes).not.toContain("outbox_due");
    expect(result.indexes).not.toContain("entries_run_id");
    expect(result.tables).not.toContain("run_events");
  });

  it("upgrades a v1 thread with data to the latest schema, keeping every row", async () => {
    const stub = newThread();
    // A thread created by an older build: only migration 1 existed, and data was written by hand in its schema.
    const v1 = await runInDurableObject(stub, (_i, state) => {
      wipeThreadTables(state.storage);
      const version = migrateThreadSchema(state.storage, THREAD_MIGRATIONS.slice(0, 1));
      const sql = state.storage.sql;
      sql.exec(
        `INSERT INTO entries (id, parent_id, kind, role, run_id, created_at, body_json) VALUES
           ('u1', NULL, 'message', 'user', NULL, 1, '{"text":"hello"}'),
           ('a1', 'u1', 'message', 'assistant', 'run-old', 2, '{"text":"hi there"}')`,
      );
      sql.exec(
        "INSERT INTO append_idempotency (key, expected_parent_id, entry_id) VALUES ('client-1', '', 'u1')",
      );
      // The older build queued entries in the outbox: the reply had not reached D1 yet.
      sql.exec(
        `INSERT INTO outbox (kind, ref_id, version, payload_json) VALUES
           ('entry', 'a1', 1, '{}'), ('run', 'run-old', 3, '{}')`,
      );
      sql.exec(
        `INSERT INTO runs (id, status, idempotency_key, user_entry_id, assistant_entry_id, created_at, started_at, ended_at)
         VALUES ('run-old', 'succeeded', 'client-1', 'u1', 'a1', 1, 1, 2)`,
      );
      sql.exec(
        "INSERT INTO usage (run_id, turn, provider, model, input_tokens, output_tokens, created_at) VALUES ('run-old', 1, 'local', 'echo', 10, 4, 2)",
      );
      // The run-events ledger existed in v1; nothing wrote it, but a row in it must not block the upgrade.
      sql.exec(
        "INSERT INTO run_events (run_id, seq, type, data_json, created_at) VALUES ('run-old', 1, 'run_started', 'null', 1)",
      );
      sql.exec(
        `INSERT INTO pin (id, tenant_id, environment, agent_id, thread_id, version_id, version, digest, artifact_json, bound_at)
         VALUES (1, 'tenant-1', 'development', 'agent-1', 'thread-1', 'ver-1', 3, 'abc', '{}', 1)`,
      );
      return { version, ...schemaObjects(state.storage) };
    });
    expect(v1.version).toBe(1);
    expect(v1.indexes).not.toContain("entries_run_id");
    expect(v1.tables).toContain("run_events");

    // A redeploy: the object restarts under the new build, which applies the missing migrations on start.
    await evictDurableObject(stub);
    const upgraded = await runInDurableObject(stub, (_i, state) => {
      const version = migrateThreadSchema(state.storage);
      const entries = new EntryStore(state.storage, { now });
      const runs = new RunStore(state.storage, { now });
      const branch = entries.branch("a1");
      return {
        version,
        stored: threadSchemaVersion(state.storage),
        ...schemaObjects(state.storage),
        branch: branch.ok ? branch.value.items.map((e) => [e.id, e.role, e.body]) : branch.code,
        retry: entries.append({
          id: "u1-again",
          parentId: null,
          kind: "message",
          role: "user",
          body: { text: "hello" },
          idempotencyKey: "client-1",
        }),
        run: runs.byIdempotencyKey("client-1"),
        usage: new UsageStore(state.storage, { now }).totalsForRun("run-old"),
        pin: state.storage.sql.exec("SELECT tenant_id, version FROM pin").toArray(),
        outbox: state.storage.sql.exec("SELECT kind, ref_id FROM outbox ORDER BY seq").toArray(),
        entryWatermark: projectedEntrySeq(state.storage),
        // New writes work against the upgraded schema.
        next: entries.append({
          id: "u2",
          parentId: "a1",
          kind: "message",
          role: "user",
          body: { text: "more" },
        }),
      };
    });
    expect(upgraded.version).toBe(THREAD_SCHEMA_VERSION);
    expect(upgraded.stored).toBe(THREAD_SCHEMA_VERSION);
    expect(upgraded.indexes).toEqual(expect.arrayContaining(["tool_calls_run_id"]));
    expect(upgraded.indexes).not.toContain("entries_run_id");
    expect(upgraded.indexes).not.toContain("entries_parent_id");
    expect(upgraded.indexes).not.toContain("outbox_due");
    // Migration 5: the unused run-events ledger is gone; every other table is as a fresh object has it.
    expect(upgraded.tables.filter((t) => !t.startsWith("cf_"))).toEqual(OUR_TABLES);
    expect(upgraded.branch).toEqual([
      ["u1", "user", { text: "hello" }],
      ["a1", "assistant", { text: "hi there" }],
    ]);
    expect(upgraded.retry).toMatchObject({ ok: true, value: { deduplicated: true, entry: { id: "u1" } } });
    expect(upgraded.run).toMatchObject({ id: "run-old", status: "succeeded", assistantEntryId: "a1" });
    expect(upgraded.usage).toEqual({ turns: 1, inputTokens: 10, outputTokens: 4 });
    expect(upgraded.pin).toEqual([{ tenant_id: "tenant-1", version: 3 }]);
    // Migration 4: queued entries become the entry watermark (below the reply D1 lacked); other rows stay queued.
    expect(upgraded.entryWatermark).toBe(1);
    expect(upgraded.outbox).toEqual([{ kind: "run", ref_id: "run-old" }]);
    expect(upgraded.next).toMatchObject({ ok: true, value: { entry: { id: "u2", parentId: "a1" } } });
  });

  it("upgrades a v6 thread's failed runs: they read back as before, and new failures keep their reason", async () => {
    const stub = newThread();
    await runInDurableObject(stub, (_i, state) => {
      wipeThreadTables(state.storage);
      migrateThreadSchema(state.storage, THREAD_MIGRATIONS.slice(0, 6));
      state.storage.sql.exec(
        `INSERT INTO runs (id, status, created_at, ended_at, error_code, error_message)
         VALUES ('run-old', 'failed', 1, 2, 'upstream_unavailable', 'The model provider is unavailable.')`,
      );
      state.storage.sql.exec("INSERT INTO runs (id, status, created_at) VALUES ('run-live', 'running', 3)");
    });

    await evictDurableObject(stub);
    const upgraded = await runInDurableObject(stub, (_i, state) => {
      const version = migrateThreadSchema(state.storage);
      const runs = new RunStore(state.storage, { now });
      const failed = runs.transition("run-live", "failed", {
        error: { code: "upstream_unavailable", reason: "context_length", message: "Too long." },
      });
      return { version, old: runs.get("run-old"), failed: failed.ok ? failed.value.error : failed.code };
    });
    expect(upgraded.version).toBe(THREAD_SCHEMA_VERSION);
    expect(upgraded.old?.error).toEqual({
      code: "upstream_unavailable",
      message: "The model provider is unavailable.",
    });
    expect(upgraded.failed).toEqual({
      code: "upstream_unavailable",
      reason: "context_length",
      message: "Too long.",
    });
  });

  it("upgrades a v9 thread: its context is kept as a version, and its old runs have no audit record", async () => {
    const stub = newThread();
    await runInDurableObject(stub, (_i, state) => {
      wipeThreadTables(state.storage);
      migrateThreadSchema(state.storage, THREAD_MIGRATIONS.slice(0, 9));
      state.storage.sql.exec(
        "INSERT INTO meta (key, value) VALUES ('launch_context', ?)",
        JSON.stringify({ version: 4, variables: { name: "Ada" } }),
      );
      state.storage.sql.exec("INSERT INTO runs (id, status, created_at) VALUES ('run-old', 'succeeded', 1)");
    });

    await evictDurableObject(stub);
    const upgraded = await runInDurableObject(stub, (_i, state) => {
      const version = migrateThreadSchema(state.storage);
      const kept = readContextVersion(state.storage, 4);
      // A later launch replaces the context in force; the earlier version stays readable.
      adoptThreadContext(state.storage, { version: 5, variables: { name: "Grace" } });
      return {
        version,
        kept,
        still: readContextVersion(state.storage, 4),
        current: readThreadContext(state.storage),
        audit: readRunAudit(state.storage, "run-old"),
      };
    });
    expect(upgraded.version).toBe(THREAD_SCHEMA_VERSION);
    expect(upgraded.kept).toEqual({ variables: { name: "Ada" }, toolPolicy: null });
    expect(upgraded.still).toEqual({ variables: { name: "Ada" }, toolPolicy: null });
    expect(upgraded.current).toEqual({ version: 5, variables: { name: "Grace" } });
    expect(upgraded.audit).toBeNull();
  });

  it("upgrades a v5 thread's entries with their depth and jump pointers, so its branches page as before", async () => {
    const stub = newThread();
    await runInDurableObject(stub, (_i, state) => {
      wipeThreadTables(state.storage);
      migrateThreadSchema(state.storage, THREAD_MIGRATIONS.slice(0, 5));
      const insert = (id: string, parent: string | null) =>
        state.storage.sql.exec(
          "INSERT INTO entries (id, parent_id, kind, role, created_at, body_json) VALUES (?, ?, 'label', NULL, 1, '{}')",
          id,
          parent,
        );
      // A 40-entry chain, a fork below c10, and a second root (as retention leaves one).
      insert("c0", null);
      for (let i = 1; i < 40; i++) {
        insert(`c${i}`, `c${i - 1}`);
        if (i === 20) insert("fork", "c10");
      }
      insert("other-root", null);
      insert("other-child", "other-root");
    });

    await evictDurableObject(stub);
    const upgraded = await runInDurableObject(stub, (_i, state) => {
      const version = migrateThreadSchema(state.storage);
      const entries = new EntryStore(state.storage, { now });
      const paged = (leaf: string, limit: number) => {
        const out: string[] = [];
        let cursor: string | undefined;
        do {
          const page = entries.branch(leaf, { limit, ...(cursor !== undefined ? { cursor } : {}) });
          if (!page.ok) return [page.code];
          out.push(...page.value.items.map((e) => e.id));
          cursor = page.value.nextCursor;
        } while (cursor !== undefined);
        return out;
      };
      const depth = (id: string) =>
        state.storage.sql.exec("SELECT depth FROM entries WHERE id = ?", id).one().depth;
      entries.append({ id: "c40", parentId: "c39", kind: "label", body: {} });
      return {
        version,
        depths: ["c0", "c39", "fork", "other-root", "other-child", "c40"].map(depth),
        unset: state.storage.sql.exec("SELECT COUNT(*) AS n FROM entries WHERE jump_id IS NULL").one().n,
        main: paged("c40", 7),
        fork: paged("fork", 4),
        other: paged("other-child", 1),
      };
    });
    const chain = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
    expect(upgraded.version).toBe(THREAD_SCHEMA_VERSION);
    expect(upgraded.depths).toEqual([0, 39, 11, 0, 1, 40]);
    expect(upgraded.unset).toBe(0);
    expect(upgraded.main).toEqual(chain(41));
    expect(upgraded.fork).toEqual([...chain(11), "fork"]);
    expect(upgraded.other).toEqual(["other-root", "other-child"]);
  });

  it("upgrades a v13 thread's entries and runs (schemas 15, 16), keeping every row, order and lookup", async () => {
    const stub = newThread();
    const before = await runInDurableObject(stub, (_i, state) => {
      wipeThreadTables(state.storage);
      migrateThreadSchema(state.storage, THREAD_MIGRATIONS.slice(0, 13));
      const entries = new EntryStore(state.storage, { now });
      entries.append({ id: "root", parentId: null, kind: "message", role: "user", body: { text: "hi" } });
      entries.append({
        id: "reply",
        parentId: "root",
        kind: "message",
        role: "assistant",
        body: { text: "a" },
      });
      entries.append({
        id: "fork",
        parentId: "root",
        kind: "message",
        role: "assistant",
        body: { text: "b" },
      });
      const sql = state.storage.sql;
      // Three runs created in the same millisecond: only insertion order tells them apart. "run-b" sorts first by id.
      sql.exec(
        `INSERT INTO runs (id, status, idempotency_key, user_entry_id, assistant_entry_id, created_at, started_at,
           ended_at, error_code, error_message, error_reason, version_id, revision, input_digest, prompt_builder,
           artifact_digest, context_version, first_delta_ms)
         VALUES ('run-z', 'failed', 'send:c1', 'root', NULL, 5, 5, 6, 'upstream_unavailable', 'Down.', 'auth', 'ver-1',
           3, 'sha256:aa', 'pb1', 'dig', 2, 40)`,
      );
      sql.exec(
        "INSERT INTO runs (id, status, idempotency_key, user_entry_id, assistant_entry_id, created_at, revision) VALUES ('run-m', 'succeeded', 'send:c2', 'root', 'reply', 5, 2)",
      );
      sql.exec("INSERT INTO runs (id, status, created_at) VALUES ('run-b', 'running', 5)");
      const runs = new RunStore(state.storage, { now });
      return { all: ["run-z", "run-m", "run-b"].map((id) => runs.get(id)) };
    });

    await evictDurableObject(stub);
    const upgraded = await runInDurableObject(stub, (_i, state) => {
      const version = migrateThreadSchema(state.storage);
      const entries = new EntryStore(state.storage, { now });
      const runs = new RunStore(state.storage, { now });
      const created = runs.create({ id: "run-new", idempotencyKey: "send:c3" });
      const seqs = state.storage.sql.exec("SELECT id, seq FROM runs ORDER BY seq").toArray();
      return {
        version,
        ...schemaObjects(state.storage),
        runsSql: String(
          state.storage.sql.exec("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'runs'").one()
            .sql,
        ),
        all: ["run-z", "run-m", "run-b"].map((id) => runs.get(id)),
        audit: readRunAudit(state.storage, "run-z"),
        byKey: [runs.byIdempotencyKey("send:c1")?.id, runs.byIdempotencyKey("send:c2")?.id],
        retried: runs.create({ idempotencyKey: "send:c2" }),
        created: created.ok ? created.value.run.id : created.code,
        seqs,
        page: runs.page(null, 10).runs.map((r) => r.id),
        recent: runs.countCreatedAfter(4, 10),
        leaf: entries.latestLeaf()?.id,
        children: entries.children("root").map((e) => e.id),
        branch: (() => {
          const b = entries.branch("fork");
          return b.ok ? b.value.items.map((e) => e.id) : b.code;
        })(),
      };
    });
    expect(upgraded.version).toBe(THREAD_SCHEMA_VERSION);
    expect(upgraded.indexes).not.toContain("entries_parent_id");
    // No index of ours on runs: the table is its primary-key tree.
    expect(upgraded.indexes.filter((i) => i.startsWith("runs"))).toEqual([]);
    expect(upgraded.runsSql).toMatch(/WITHOUT ROWID/);
    expect(upgraded.all).toEqual(before.all);
    // The audit record survives the rebuild; from before every model call was recorded (schema 18), it has one step.
    expect(upgraded.audit).toEqual({
      promptBuilder: "pb1",
      artifactDigest: "dig",
      contextVersion: 2,
      inputDigest: "sha256:aa",
      steps: [{ step: 0, inputDigest: "sha256:aa" }],
    });
    expect(upgraded.byKey).toEqual(["run-z", "run-m"]);
    expect(upgraded.retried).toMatchObject({ ok: true, value: { created: false, run: { id: "run-m" } } });
    expect(upgraded.created).toBe("run-new");
    // Insertion order survives the rebuild (the old rowids), and a new run goes after it.
    expect(upgraded.seqs.map((r) => r.id)).toEqual(["run-z", "run-m", "run-b", "run-new"]);
    expect(upgraded.page).toEqual(["run-z", "run-m", "run-b", "run-new"]);
    expect(upgraded.recent).toBe(4);
    expect(upgraded.leaf).toBe("fork");
    expect(upgraded.children).toEqual(["reply", "fork"]);
    expect(upgraded.branch).toEqual(["root", "fork"]);
  });

  it("rolls a failing migration back whole and keeps the previous version", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      migrateThreadSchema(state.storage);
      const broken = [
        ...THREAD_MIGRATIONS,
        { version: THREAD_SCHEMA_VERSION + 1, up: ["CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL"] },
      ];
      let error = "";
      try {
        migrateThreadSchema(state.storage, broken);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      return {
        error,
        version: threadSchemaVersion(state.storage),
        tables: schemaObjects(state.storage).tables,
      };
    });
    expect(result.error).not.toBe("");
    expect(result.version).toBe(THREAD_SCHEMA_VERSION);
    expect(result.tables).not.toContain("half_done");
  });

  it("refuses storage written by a newer build and a misnumbered list, changing nothing", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      migrateThreadSchema(state.storage);
      state.storage.sql.exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
      const attempt = (migrations?: typeof THREAD_MIGRATIONS) => {
        try {
          migrateThreadSchema(state.storage, migrations);
          return "applied";
        } catch (e) {
          return e instanceof Error ? e.message : String(e);
        }
      };
      const newer = attempt();
      const gap = attempt([
        { version: 1, up: [] },
        { version: 3, up: ["CREATE TABLE skipped (x INTEGER)"] },
      ]);
      return {
        newer,
        gap,
        version: threadSchemaVersion(state.storage),
        tables: schemaObjects(state.storage).tables,
      };
    });
    expect(result.newer).toMatch(/newer than this build/);
    expect(result.gap).toMatch(/numbered 1\.\.n/);
    expect(result.version).toBe(99);
    expect(result.tables).not.toContain("skipped");
  });
});
