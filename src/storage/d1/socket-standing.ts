// What an open socket's access still rests on, read in one D1 batch: its tenant's and agent's status, whether the
// `sk_` keys that minted its tokens are still live, and whether its visitor was revoked (docs/security.md).
import { z } from "zod";

export interface SocketStanding {
  /** Null when the tenant no longer exists. */
  tenantStatus: string | null;
  /** Null when the agent no longer exists. */
  agentStatus: string | null;
  /** Of the key ids asked about, those still live (not revoked). */
  liveKeys: ReadonlySet<string>;
  /** Of the visitor hashes asked about, those revoked now. */
  revokedVisitors: ReadonlySet<string>;
}

export interface StandingQuery {
  tenantId: string;
  agentId: string;
  threadId: string;
  apiKeyIds: readonly string[];
  visitorHashes: readonly string[];
  /** ISO time: a visitor revocation counts until its `expires_at`. */
  now: string;
  /** Marks the thread active first, in the same batch (src/auth/socket-activity.ts), unless marked since `staleBefore`. */
  mark?: { at: string; staleBefore: string };
}

const statusRow = z.object({ status: z.string() });
const idRow = z.object({ id: z.string() });
const hashRow = z.object({ visitor_hash: z.string() });

function rows<T>(schema: z.ZodType<T>, result: D1Result | undefined): T[] {
  return (result?.results ?? []).flatMap((row) => {
    const parsed = schema.safeParse(row);
    return parsed.success ? [parsed.data] : [];
  });
}

/** One batch; the statuses are read after the mark, so a disconnect that reads the mark finds this thread's sockets. */
export async function readSocketStanding(db: D1Database, query: StandingQuery): Promise<SocketStanding> {
  const statements: D1PreparedStatement[] = [];
  if (query.mark !== undefined) {
    statements.push(
      db
        .prepare(
          `UPDATE threads SET active_at = ?
           WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL AND (active_at IS NULL OR active_at < ?)`,
        )
        .bind(query.mark.at, query.tenantId, query.threadId, query.mark.staleBefore),
    );
  }
  const first = statements.length;
  statements.push(
    db.prepare("SELECT status FROM tenants WHERE id = ?").bind(query.tenantId),
    db
      .prepare("SELECT status FROM agents WHERE tenant_id = ? AND id = ?")
      .bind(query.tenantId, query.agentId),
    db
      .prepare(
        `SELECT id FROM api_keys
         WHERE tenant_id = ? AND revoked_at IS NULL AND id IN (SELECT value FROM json_each(?))`,
      )
      .bind(query.tenantId, JSON.stringify(query.apiKeyIds)),
    db
      .prepare(
        `SELECT visitor_hash FROM revoked_visitors
         WHERE tenant_id = ? AND expires_at > ? AND visitor_hash IN (SELECT value FROM json_each(?))`,
      )
      .bind(query.tenantId, query.now, JSON.stringify(query.visitorHashes)),
  );
  const results = await db.batch(statements);
  return {
    tenantStatus: rows(statusRow, results[first])[0]?.status ?? null,
    agentStatus: rows(statusRow, results[first + 1])[0]?.status ?? null,
    liveKeys: new Set(rows(idRow, results[first + 2]).map((row) => row.id)),
    revokedVisitors: new Set(rows(hashRow, results[first + 3]).map((row) => row.visitor_hash)),
  };
}
