// Where each entry sits on its root→leaf path: its depth and one jump pointer, so any ancestor is a few reads away.
//
// The pointers form Myers' skew-binary "random-access stack": a new entry jumps to its parent's jump's jump when the
// parent's two jumps are equally long, otherwise to its parent. Finding the ancestor at a given depth then takes
// O(log n) lookups from any entry, which is what lets a branch page be read without walking the whole branch.
// Invariants: a root has depth 0 and jumps to itself; a child is one deeper than its parent; a jump goes to an
// ancestor (retention, which re-roots entries, rebuilds both below the first entry it re-rooted).

export interface Ancestry {
  depth: number;
  jumpId: string;
}

/** Upper bound on the steps of one ancestor walk: each halves the distance or steps once, so 2·log₂ of any depth. */
const MAX_WALK_STEPS = 256;

const isInteger = (value: SqlStorageValue | undefined): value is number => Number.isSafeInteger(value);

/** The ancestry of a new child of `parentId`, or null when no such entry is in this thread. */
export function ancestryBelow(storage: DurableObjectStorage, parentId: string): Ancestry | null {
  const row = storage.sql
    .exec(
      `SELECT p.depth, j.depth, j.jump_id, jj.depth
       FROM entries p
       LEFT JOIN entries j ON j.id = p.jump_id
       LEFT JOIN entries jj ON jj.id = j.jump_id
       WHERE p.id = ?`,
      parentId,
    )
    .raw()
    .next();
  if (row.done) return null;
  const [parentDepth, jumpDepth, jumpJumpId, jumpJumpDepth] = row.value;
  if (!isInteger(parentDepth)) throw new Error("entries row: depth does not hold a valid value");
  const depth = parentDepth + 1;
  const even =
    isInteger(jumpDepth) &&
    isInteger(jumpJumpDepth) &&
    typeof jumpJumpId === "string" &&
    parentDepth - jumpDepth === jumpDepth - jumpJumpDepth;
  return { depth, jumpId: even ? jumpJumpId : parentId };
}

/**
 * The insert of an entry, bound (id, parent id, kind, role, run id, created at, body, agent version[, attachments]):
 * a root at depth 0 jumping to itself; a child placed by `ancestryBelow`'s rule computed in the insert itself from
 * its parent, its jump and its jump's jump, so an append is one statement (nothing is inserted without the parent).
 * The attachments column is named only when there are refs: an entry without any is written as before schema 20.
 */
export function insertEntrySql(child: boolean, attachments: boolean): string {
  const columns = `id, parent_id, kind, role, run_id, created_at, body_json, depth, jump_id, agent_version${
    attachments ? ", attachments_json" : ""
  }`;
  const refs = attachments ? ", ?9" : "";
  return child
    ? `INSERT INTO entries (${columns})
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, p.depth + 1,
         CASE WHEN j.depth IS NOT NULL AND jj.depth IS NOT NULL AND j.jump_id IS NOT NULL
           AND p.depth - j.depth = j.depth - jj.depth THEN j.jump_id ELSE p.id END,
         COALESCE(?8, p.agent_version)${refs}
       FROM entries p LEFT JOIN entries j ON j.id = p.jump_id LEFT JOIN entries jj ON jj.id = j.jump_id
       WHERE p.id = ?2
       ON CONFLICT (id) DO NOTHING RETURNING seq, agent_version`
    : `INSERT INTO entries (${columns}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?1, ?8${refs})
       ON CONFLICT (id) DO NOTHING RETURNING seq, agent_version`;
}

/** The seq and depth of an entry, or null when it is not in this thread. */
export function entryPosition(
  storage: DurableObjectStorage,
  id: string,
): { seq: number; depth: number } | null {
  const row = storage.sql.exec("SELECT seq, depth FROM entries WHERE id = ?", id).raw().next();
  if (row.done) return null;
  const [seq, depth] = row.value;
  if (!isInteger(seq) || !isInteger(depth)) throw new Error("entries row: seq or depth is not an integer");
  return { seq, depth };
}

/**
 * The walk from entry `?1` up to its ancestor at depth `?2`, as a recursive CTE `walk(id, depth, …)` whose row at
 * depth `?2` is that ancestor: each step takes the jump when it does not overshoot, else the parent.
 */
export const ANCESTOR_WALK = `walk(id, depth, parent_id, jump_id, jump_depth, steps) AS (
    SELECT e.id, e.depth, e.parent_id, e.jump_id, j.depth, 0
    FROM entries e LEFT JOIN entries j ON j.id = e.jump_id WHERE e.id = ?1
    UNION ALL
    SELECT n.id, n.depth, n.parent_id, n.jump_id, nj.depth, w.steps + 1
    FROM walk w
    JOIN entries n ON n.id = CASE WHEN w.jump_depth >= ?2 THEN w.jump_id ELSE w.parent_id END
    LEFT JOIN entries nj ON nj.id = n.jump_id
    WHERE w.depth > ?2 AND w.steps < ${MAX_WALK_STEPS}
  )`;

/** The seq of `fromId`'s ancestor at `depth` (itself at its own depth), or null when there is none. */
export function ancestorSeqAt(storage: DurableObjectStorage, fromId: string, depth: number): number | null {
  const row = storage.sql
    .exec(
      `WITH RECURSIVE ${ANCESTOR_WALK}
       SELECT e.seq FROM walk JOIN entries e ON e.id = walk.id WHERE walk.depth = ?2`,
      fromId,
      depth,
    )
    .raw()
    .next();
  if (row.done) return null;
  const [seq] = row.value;
  return isInteger(seq) ? seq : null;
}

/**
 * Recomputes depth and jump pointers for every entry from `fromSeq` on, in seq order (a parent always precedes its
 * children), writing only rows that change. Entries before `fromSeq` must already be right.
 */
export function rebuildAncestry(storage: DurableObjectStorage, fromSeq: number): number {
  const sql = storage.sql;
  let changed = 0;
  for (let after = fromSeq - 1; ; ) {
    const rows = sql
      .exec(
        "SELECT seq, id, parent_id, depth, jump_id FROM entries WHERE seq > ? ORDER BY seq LIMIT 500",
        after,
      )
      .toArray();
    for (const row of rows) {
      const id = String(row.id);
      const parentId = row.parent_id === null ? null : String(row.parent_id);
      // A parent that is not stored (append never writes one) leaves the entry where a root would be.
      const ancestry = (parentId === null ? null : ancestryBelow(storage, parentId)) ?? {
        depth: 0,
        jumpId: id,
      };
      if (row.depth !== ancestry.depth || row.jump_id !== ancestry.jumpId) {
        sql.exec(
          "UPDATE entries SET depth = ?, jump_id = ? WHERE seq = ?",
          ancestry.depth,
          ancestry.jumpId,
          row.seq,
        );
        changed += 1;
      }
    }
    const last = rows[rows.length - 1];
    if (last === undefined) return changed;
    after = Number(last.seq);
  }
}
