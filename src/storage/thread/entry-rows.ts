// The shape of a thread entry and how an `entries` row is read back into one: positionally, with plain checks.
import { z } from "zod";
import { type AttachmentRef, attachmentRef, ENTRY_KINDS } from "../../shared/protocol";
import { parseJsonColumn } from "../json-column";
import type { JsonValue } from "../redact";

export { ENTRY_KINDS };
export type EntryKind = (typeof ENTRY_KINDS)[number];

/** `human_agent`: a person of the tenant's team answering during a handoff (docs/protocol.md). */
export const ENTRY_ROLES = ["user", "assistant", "system", "tool", "human_agent"] as const;
export type EntryRole = (typeof ENTRY_ROLES)[number];

export interface Entry {
  /** Insertion order within the thread; along any root→leaf path it strictly increases. */
  seq: number;
  id: string;
  parentId: string | null;
  kind: EntryKind;
  role: EntryRole | null;
  runId: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
  body: JsonValue;
  /**
   * The agent version in effect at this entry: set by a `version_change` entry and inherited by everything appended
   * below it; null = the thread's pinned version.
   */
  agentVersion: number | null;
  /** A user message's attachments (docs/protocol.md#attachments); absent when it has none. */
  attachments?: AttachmentRef[];
}

const attachmentsColumn = z.array(attachmentRef);

// Every read selects these columns in this order: rows are read positionally (`cursor.raw()`), which skips building
// one object per row.
export const ENTRY_COLUMNS =
  "seq, id, parent_id, kind, role, run_id, created_at, body_json, agent_version, attachments_json";

const isKind = (value: SqlStorageValue | undefined): value is EntryKind =>
  typeof value === "string" && (ENTRY_KINDS as readonly string[]).includes(value);
const isRole = (value: SqlStorageValue | undefined): value is EntryRole =>
  typeof value === "string" && (ENTRY_ROLES as readonly string[]).includes(value);
const isText = (value: SqlStorageValue | undefined): value is string => typeof value === "string";
const isTextOrNull = (value: SqlStorageValue | undefined): value is string | null =>
  value === null || typeof value === "string";
const isInteger = (value: SqlStorageValue | undefined): value is number => Number.isSafeInteger(value);
export const integerOrNull = (value: SqlStorageValue | undefined): number | null =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : null;

/** Names the first column that broke the entry shape, never its value (bodies can hold user content). */
const malformedRow = (column: string, seq: SqlStorageValue | undefined): Error =>
  new Error(`entries row seq=${String(seq)}: ${column} does not hold a valid value`);

/**
 * One `entries` row (ENTRY_COLUMNS order) as an Entry. Rows come from this object's own SQLite, written only by
 * `append`, so plain type checks replace a zod parse per row (most of a branch read's decoding time, `npm run bench`
 * B3); a row that does not match still stops the read with an internal error instead of reaching a client.
 */
export function entryFromRow(row: SqlStorageValue[]): Entry {
  const [seq, id, parentId, kind, role, runId, createdAt, bodyJson, agentVersion, attachmentsJson] = row;
  if (row.length !== 10) throw malformedRow(`the row (${row.length} columns)`, seq);
  if (!isInteger(seq)) throw malformedRow("seq", seq);
  if (!isText(id)) throw malformedRow("id", seq);
  if (!isTextOrNull(parentId)) throw malformedRow("parent_id", seq);
  if (!isKind(kind)) throw malformedRow("kind", seq);
  if (role !== null && !isRole(role)) throw malformedRow("role", seq);
  if (!isTextOrNull(runId)) throw malformedRow("run_id", seq);
  if (!isInteger(createdAt)) throw malformedRow("created_at", seq);
  if (!isText(bodyJson)) throw malformedRow("body_json", seq);
  if (agentVersion !== null && !isInteger(agentVersion)) throw malformedRow("agent_version", seq);
  if (!isTextOrNull(attachmentsJson)) throw malformedRow("attachments_json", seq);
  // Rare (user messages with files), so parsed in full.
  const attachments =
    attachmentsJson === null ? null : attachmentsColumn.safeParse(parseJsonColumn(attachmentsJson));
  if (attachments !== null && !attachments.success) throw malformedRow("attachments_json", seq);
  return {
    seq,
    id,
    parentId,
    kind,
    role,
    runId,
    createdAt,
    body: parseJsonColumn(bodyJson),
    agentVersion: integerOrNull(agentVersion),
    ...(attachments !== null ? { attachments: attachments.data } : {}),
  };
}

export function entriesFrom(cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): Entry[] {
  const entries: Entry[] = [];
  for (const row of cursor.raw()) entries.push(entryFromRow(row));
  return entries;
}

export function firstEntry(cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): Entry | null {
  for (const row of cursor.raw()) return entryFromRow(row);
  return null;
}
