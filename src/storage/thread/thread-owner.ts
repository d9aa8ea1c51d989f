// Who may use the thread, as the thread object itself records it: the subject set at first bind, and the erasure
// tombstone that outlives the thread's storage so a still-valid token can never bind it again.

/** The subject and how it was established: told by the launch that created the thread, else kept at first bind. */
export interface ThreadOwner {
  subject: string;
  subjectKind: "visitor" | "user";
}

const OWNER_SUBJECT_KEY = "owner_subject";
const OWNER_KIND_KEY = "owner_subject_kind";
/**
 * In the object's key/value store, not a table: erasure deletes every table (and the schema version with them), and
 * this key is written after that, so the object's next life starts from an empty schema that still knows it is erased.
 * It holds only the time: no subject, no content (docs/privacy.md).
 */
const TOMBSTONE_KEY = "thread_erased_at";

export function readOwner(storage: DurableObjectStorage): ThreadOwner | null {
  const rows = storage.sql
    .exec("SELECT key, value FROM meta WHERE key IN (?, ?)", OWNER_SUBJECT_KEY, OWNER_KIND_KEY)
    .toArray();
  const subject = rows.find((row) => row.key === OWNER_SUBJECT_KEY)?.value;
  const kind = rows.find((row) => row.key === OWNER_KIND_KEY)?.value;
  if (typeof subject !== "string" || subject === "") return null;
  return { subject, subjectKind: kind === "user" ? "user" : "visitor" };
}

export function writeOwner(storage: DurableObjectStorage, owner: ThreadOwner): void {
  for (const [key, value] of [
    [OWNER_SUBJECT_KEY, owner.subject],
    [OWNER_KIND_KEY, owner.subjectKind],
  ] as const) {
    storage.sql.exec(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key,
      value,
    );
  }
}

/** When the thread was erased (epoch ms), or null while it was not. */
export function readTombstone(storage: DurableObjectStorage): number | null {
  const value = storage.kv.get(TOMBSTONE_KEY);
  return typeof value === "number" ? value : null;
}

/** Marks the object erased; call it after its storage was deleted (it survives nothing else). */
export function writeTombstone(storage: DurableObjectStorage, at: number): void {
  storage.kv.put(TOMBSTONE_KEY, at);
}
