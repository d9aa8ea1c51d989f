// Append keys (`append_idempotency`): only sends held in a handoff carry one, so most threads hold none, and a send
// asks without a statement once that is known.
/**
 * Objects whose append keys were found to be none and that wrote none since: only sends held in a handoff carry one,
 * and every send asks (docs/decisions.md "Statements per turn"). Set only by `appendKeyEntryId`, which runs outside
 * transactions; cleared before a key is written, so a rolled-back write leaves it cleared.
 */
const noAppendKeys = new WeakSet<DurableObjectStorage>();

/** The entry an append key at `position` (an expected parent id, or "" for none) stored, or null. */
export function appendKeyEntryId(
  storage: DurableObjectStorage,
  key: string,
  position: string,
): string | null {
  if (noAppendKeys.has(storage)) return null;
  let found: string | null = null;
  for (const [entryId, hit] of storage.sql
    .exec(
      `SELECT entry_id, 1 FROM append_idempotency WHERE key = ? AND expected_parent_id = ?
       UNION ALL SELECT NULL, 0 WHERE NOT EXISTS (SELECT 1 FROM append_idempotency)`,
      key,
      position,
    )
    .raw()) {
    if (hit === 0) noAppendKeys.add(storage);
    else if (typeof entryId === "string") found = entryId;
  }
  return found;
}

/** Before an append key is written: the object may hold keys from now on. */
export function appendKeyWritten(storage: DurableObjectStorage): void {
  noAppendKeys.delete(storage);
}
