// Legal holds (docs/privacy.md) on D1: a thread or a subject held by the tenant; retention and erasure skip what is held.
//
// A thread is held when it has a thread hold or its subject has a subject hold. Every statement binds tenant_id.
import { z } from "zod";
import { AppError } from "../../errors";

export type HoldScope = "thread" | "subject";

export interface LegalHold {
  scope: HoldScope;
  target: string;
  reason: string;
  createdAt: string;
}

export const HOLDS_SQL = {
  put: `INSERT INTO legal_holds (tenant_id, scope, target, reason, created_at, created_by_key)
    VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, scope, target) DO UPDATE SET reason = excluded.reason`,
  get: "SELECT scope, target, reason, created_at FROM legal_holds WHERE tenant_id = ? AND scope = ? AND target = ?",
  remove: "DELETE FROM legal_holds WHERE tenant_id = ? AND scope = ? AND target = ?",
  /** A thread's hold, its own before its subject's (the subject read from the registry when not given). */
  forThread: `SELECT scope, target, reason, created_at FROM legal_holds
    WHERE tenant_id = ?1 AND ((scope = 'thread' AND target = ?2) OR (scope = 'subject' AND target = COALESCE(?3,
      (SELECT t.subject FROM threads t WHERE t.tenant_id = ?1 AND t.id = ?2))))
    ORDER BY CASE scope WHEN 'thread' THEN 0 ELSE 1 END LIMIT 1`,
  /** The holds that cover any of several sessions: thread ids and subjects as JSON arrays. */
  forMany: `SELECT scope, target, reason, created_at FROM legal_holds WHERE tenant_id = ?
    AND ((scope = 'thread' AND target IN (SELECT value FROM json_each(?)))
      OR (scope = 'subject' AND target IN (SELECT value FROM json_each(?))))`,
  page: `SELECT scope, target, reason, created_at FROM legal_holds
    WHERE tenant_id = ?1 AND (created_at > ?2 OR (created_at = ?2 AND (scope > ?3 OR (scope = ?3 AND target > ?4))))
    ORDER BY created_at, scope, target LIMIT ?5`,
} as const;

const holdRow = z.object({
  scope: z.enum(["thread", "subject"]),
  target: z.string(),
  reason: z.string(),
  created_at: z.string(),
});

const toHold = (row: unknown): LegalHold => {
  const r = holdRow.parse(row);
  return { scope: r.scope, target: r.target, reason: r.reason, createdAt: r.created_at };
};

/**
 * Places (or re-words) a hold. A repeated PUT keeps the original time and key: the hold has held since then.
 * Returns the hold as stored.
 */
export async function putHold(
  db: D1Database,
  tenantId: string,
  hold: { scope: HoldScope; target: string; reason: string; createdAt: string; createdByKey: string | null },
): Promise<LegalHold> {
  const [, read] = await db.batch([
    db
      .prepare(HOLDS_SQL.put)
      .bind(tenantId, hold.scope, hold.target, hold.reason, hold.createdAt, hold.createdByKey),
    db.prepare(HOLDS_SQL.get).bind(tenantId, hold.scope, hold.target),
  ]);
  return toHold(read?.results[0]);
}

/** Lifts a hold; false when there was none. */
export async function removeHold(
  db: D1Database,
  tenantId: string,
  scope: HoldScope,
  target: string,
): Promise<boolean> {
  const result = await db.prepare(HOLDS_SQL.remove).bind(tenantId, scope, target).run();
  return (result.meta.changes ?? 0) > 0;
}

/**
 * The hold that covers one thread, or null: its own hold first, else its subject's. `subject` may be passed by a
 * caller that has it (subject erasure); without it, the thread registry's subject is used.
 */
export async function findHold(
  db: D1Database,
  tenantId: string,
  threadId: string,
  subject?: string | null,
): Promise<LegalHold | null> {
  const row = await db
    .prepare(HOLDS_SQL.forThread)
    .bind(tenantId, threadId, subject ?? null)
    .first();
  return row === null ? null : toHold(row);
}

/** A subject's own hold (erasure by subject refuses while it exists), or null. */
export async function findSubjectHold(
  db: D1Database,
  tenantId: string,
  subject: string,
): Promise<LegalHold | null> {
  const row = await db.prepare(HOLDS_SQL.get).bind(tenantId, "subject", subject).first();
  return row === null ? null : toHold(row);
}

/** The hold covering each of `sessions` (thread hold first), keyed by thread id; one statement. */
export async function holdsForSessions(
  db: D1Database,
  tenantId: string,
  sessions: readonly { threadId: string; subject: string }[],
): Promise<Map<string, LegalHold>> {
  const out = new Map<string, LegalHold>();
  if (sessions.length === 0) return out;
  const { results } = await db
    .prepare(HOLDS_SQL.forMany)
    .bind(
      tenantId,
      JSON.stringify(sessions.map((s) => s.threadId)),
      JSON.stringify([...new Set(sessions.map((s) => s.subject))]),
    )
    .all();
  const holds = results.map(toHold);
  for (const session of sessions) {
    const hold =
      holds.find((h) => h.scope === "thread" && h.target === session.threadId) ??
      holds.find((h) => h.scope === "subject" && h.target === session.subject);
    if (hold !== undefined) out.set(session.threadId, hold);
  }
  return out;
}

export interface HoldPosition {
  createdAt: string;
  scope: string;
  target: string;
}

/** A page of the tenant's holds, oldest first; `next` positions the following page. */
export async function listHolds(
  db: D1Database,
  tenantId: string,
  page: { limit: number; after?: HoldPosition },
): Promise<{ items: LegalHold[]; next?: HoldPosition }> {
  const a = page.after ?? { createdAt: "", scope: "", target: "" };
  const { results } = await db
    .prepare(HOLDS_SQL.page)
    .bind(tenantId, a.createdAt, a.scope, a.target, page.limit + 1)
    .all();
  const items = results.map(toHold);
  if (items.length <= page.limit) return { items };
  const kept = items.slice(0, page.limit);
  const last = kept[kept.length - 1];
  return last === undefined
    ? { items: kept }
    : { items: kept, next: { createdAt: last.createdAt, scope: last.scope, target: last.target } };
}

/** docs/privacy.md: a held thread is never erased; the refusal names the hold so the tenant knows what to lift. */
export function heldError(scope: "thread" | "subject"): AppError {
  return new AppError(
    "conflict",
    scope === "thread"
      ? "The conversation is under a legal hold; lift the hold to erase it."
      : "The conversation's subject is under a legal hold; lift the hold to erase it.",
    { reason: "legal_hold" },
  );
}

/**
 * Refuses (409 `legal_hold`) when any of a subject's `threadIds` is held, or the subject itself: erasure by subject
 * erases all of them or none.
 */
export async function refuseIfHeld(
  db: D1Database,
  tenantId: string,
  subject: string,
  threadIds: readonly string[],
): Promise<void> {
  const subjectHold = await findSubjectHold(db, tenantId, subject);
  if (subjectHold !== null) throw heldError("subject");
  const holds = await holdsForSessions(
    db,
    tenantId,
    threadIds.map((threadId) => ({ threadId, subject })),
  );
  if (holds.size > 0) throw heldError("thread");
}
