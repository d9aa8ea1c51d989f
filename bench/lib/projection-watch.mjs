// Watches the product Worker's local D1 file (read-only, from this process) for projected rows, so the DO→D1 lag is
// measured without adding a single request to the Worker under load.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { summarize } from "./stats.mjs";

function sqliteFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sqliteFiles(path);
    return name.endsWith(".sqlite") ? [path] : [];
  });
}

/** Every local D1 holding a projection (the control plane's and each shard's): a tenant's rows are in one of them. */
async function openProjectionDbs(statePath) {
  // node:sqlite is still flagged experimental in Node 22; its one warning is not worth printing in the bench table.
  const emit = process.emitWarning;
  process.emitWarning = () => {};
  const { DatabaseSync } = await import("node:sqlite");
  process.emitWarning = emit;
  const dbs = [];
  for (const file of sqliteFiles(join(statePath, "v3", "d1"))) {
    const db = new DatabaseSync(file, { readOnly: true });
    const table = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'agent_messages'")
      .get();
    if (table) dbs.push(db);
    else db.close();
  }
  return dbs;
}

export async function watchProjection(statePath, { intervalMs = 20 } = {}) {
  const dbs = await openProjectionDbs(statePath);
  const pending = new Map();
  const lags = [];
  let timer = null;

  function poll() {
    if (pending.size === 0) return;
    const ids = [...pending.keys()];
    for (const db of dbs) {
      for (let i = 0; i < ids.length; i += 200) {
        const chunk = ids.slice(i, i + 200);
        const rows = db
          .prepare(`SELECT id FROM agent_messages WHERE id IN (${chunk.map(() => "?").join(",")})`)
          .all(...chunk);
        const now = performance.now();
        for (const row of rows) {
          const at = pending.get(row.id);
          if (at === undefined) continue;
          lags.push(now - at);
          pending.delete(row.id);
        }
      }
    }
  }

  /**
   * Drains that reached D1 for the watched threads: each one raised its session row's version by one. Versions are
   * reserved in blocks of 1,000 per object lifetime (src/storage/projection/projection-drain.ts `VERSION_BLOCK`; a restart,
   * such as an idle eviction between launch and connect, skips to the next block), so the drains of a lifetime are
   * the version modulo 1,000.
   */
  function drainsOf(threadIds) {
    if (dbs.length === 0 || threadIds.length === 0) return null;
    let total = 0;
    for (const db of dbs) {
      for (let i = 0; i < threadIds.length; i += 200) {
        const chunk = threadIds.slice(i, i + 200);
        const row = db
          .prepare(
            `SELECT COALESCE(SUM(version % 1000), 0) AS n FROM agent_sessions WHERE id IN (${chunk.map(() => "?").join(",")})`,
          )
          .get(...chunk);
        total += Number(row?.n ?? 0);
      }
    }
    return total;
  }

  return {
    available: dbs.length > 0,
    start() {
      if (dbs.length > 0 && timer === null) timer = setInterval(poll, intervalMs);
    },
    expect(id, at) {
      pending.set(id, at);
    },
    /** Waits up to `graceMs` for the rows still missing, then reports (with the drains of `threadIds`). */
    async finish(graceMs = 5_000, threadIds = []) {
      const deadline = performance.now() + graceMs;
      while (pending.size > 0 && performance.now() < deadline) {
        poll();
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
      if (timer !== null) clearInterval(timer);
      const drains = drainsOf(threadIds);
      for (const db of dbs) db.close();
      return { projected: lags.length, missing: pending.size, lagMs: summarize(lags), drains };
    },
  };
}
