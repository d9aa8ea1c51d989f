// The scan that proves an erasure (docs/privacy.md): every row of every D1 table, and every table and key of the erased
// threads' objects and of the tenant's events and quota objects, searched for the subject id and the erased text; and the
// tenant's attachment objects in R2, each of which the ledger must still owe to a live thread (no orphan, no upload left
// half-way), their bytes searched too.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Environment } from "../../src/control/deployment-store";
import { listTenantAttachmentKeys, uploadKey } from "../../src/storage/attachments/bucket";
import { threadObjectName } from "../../src/thread/contract";

export interface ErasedThread {
  tenantId: string;
  agentId: string;
  threadId: string;
  environment?: Environment;
}

export interface ScanInput {
  tenantId: string;
  /** The subject id and every text the erased threads held. */
  needles: readonly string[];
  /** The erased threads, whose objects' storage is read whole. */
  threads: readonly ErasedThread[];
}

const decoder = new TextDecoder();

const isByteArray = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((byte) => typeof byte === "number");

/** A cell as text: blobs (D1 answers them as arrays of bytes) decoded as UTF-8 too, so bytes are searched as well. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (isByteArray(value)) return decoder.decode(new Uint8Array(value));
  if (value instanceof ArrayBuffer) return decoder.decode(value);
  if (ArrayBuffer.isView(value)) return decoder.decode(value);
  return typeof value === "string" ? value : JSON.stringify(value);
}

function hits(where: string, text: string, needles: readonly string[], found: string[]): void {
  for (const needle of needles) if (text.includes(needle)) found.push(`${where}: ${JSON.stringify(needle)}`);
}

/**
 * The search index's own pages store terms, not text: lowercased words, each after the prefix it shares with the
 * term before it. A needle's long words (a random id's hex runs) are looked for there, less a short shared prefix.
 */
function indexTerms(needles: readonly string[]): string[] {
  return needles.flatMap((needle) =>
    needle
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word.length >= 10)
      .map((word) => word.slice(3)),
  );
}

/** Every D1 table (FTS virtual and shadow tables included), all columns of all rows. */
async function scanD1(needles: readonly string[], found: string[]): Promise<number> {
  const { results: tables } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  ).all<{ name: string }>();
  for (const { name } of tables) {
    const { results } = await env.DB.prepare(`SELECT * FROM "${name.replaceAll('"', '""')}"`).all();
    const lookFor = name.endsWith("_data") ? [...needles, ...indexTerms(needles)] : needles;
    for (const row of results) {
      for (const [column, value] of Object.entries(row))
        hits(`D1 ${name}.${column}`, cellText(value), lookFor, found);
    }
  }
  return tables.length;
}

/** Every table of a Durable Object's SQLite and every key of its key-value storage. */
async function dumpObject(state: DurableObjectState): Promise<{ where: string; text: string }[]> {
  const out: { where: string; text: string }[] = [];
  const tables = state.storage.sql
    .exec(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
    )
    .toArray();
  for (const { name } of tables) {
    const table = String(name);
    for (const row of state.storage.sql.exec(`SELECT * FROM "${table.replaceAll('"', '""')}"`)) {
      for (const [column, value] of Object.entries(row))
        out.push({ where: `${table}.${column}`, text: cellText(value) });
    }
  }
  for (const [key, value] of await state.storage.list())
    out.push({ where: `kv ${key}`, text: `${key} ${cellText(value)}` });
  return out;
}

/** An erased object resets itself just after answering; a call in that moment fails and is tried again. */
async function objectDump(stub: DurableObjectStub): Promise<{ where: string; text: string }[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await runInDurableObject(stub, (_instance, state) => dumpObject(state));
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)));
    }
  }
}

/** The tenant's attachment ledger (its quota object's tables): each object's SHA-256 and the threads that use it. */
async function ledger(tenantId: string): Promise<{ objects: Set<string>; refs: Map<string, string[]> }> {
  const stub = env.QUOTA.get(env.QUOTA.idFromName(tenantId));
  return runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    const objects = new Set(
      sql
        .exec("SELECT sha256 FROM attachment_objects")
        .toArray()
        .map((r) => String(r.sha256)),
    );
    const refs = new Map<string, string[]>();
    for (const row of sql.exec("SELECT sha256, thread_id FROM attachment_refs").toArray()) {
      const sha256 = String(row.sha256);
      refs.set(sha256, [...(refs.get(sha256) ?? []), String(row.thread_id)]);
    }
    return { objects, refs };
  });
}

/**
 * R2 against the ledger (docs/privacy.md#attachments): every object under the tenant's prefix is in the ledger and used
 * by at least one live thread (an erased one's use is an orphan too), every ledger object exists, no upload is left in
 * staging, and no object's bytes hold a needle.
 */
async function scanAttachments(tenantId: string, needles: readonly string[], found: string[]): Promise<void> {
  const keys = await listTenantAttachmentKeys(env.ATTACHMENTS, tenantId);
  const staging = uploadKey(tenantId, "");
  const uploads = (await env.ATTACHMENTS.list({ prefix: staging })).objects;
  for (const object of uploads) found.push(`R2 ${object.key}: an upload left in staging`);
  const { objects, refs } = await ledger(tenantId);
  const users = [...new Set([...refs.values()].flat())];
  const live = new Set<string>();
  if (users.length > 0) {
    const { results } = await env.DB.prepare(
      `SELECT id FROM threads WHERE tenant_id = ? AND deleted_at IS NULL
       AND id IN (SELECT value FROM json_each(?))`,
    )
      .bind(tenantId, JSON.stringify(users))
      .all<{ id: string }>();
    for (const row of results) live.add(row.id);
  }
  const inBucket = new Set<string>();
  for (const key of keys) {
    const sha256 = key.slice(key.lastIndexOf("/") + 1);
    inBucket.add(sha256);
    const usedBy = (refs.get(sha256) ?? []).filter((threadId) => live.has(threadId));
    if (!objects.has(sha256)) found.push(`R2 ${key}: an object the ledger does not know`);
    else if (usedBy.length === 0) found.push(`R2 ${key}: an orphan object (no live thread uses it)`);
    const body = await env.ATTACHMENTS.get(key);
    if (body !== null) hits(`R2 ${key}`, decoder.decode(await body.arrayBuffer()), needles, found);
  }
  for (const sha256 of objects) {
    if (!inBucket.has(sha256)) found.push(`ledger ${sha256}: no object in R2`);
  }
  for (const [sha256, threadIds] of refs) {
    for (const threadId of threadIds)
      if (!live.has(threadId)) found.push(`ledger ${sha256}: used by erased or unknown thread ${threadId}`);
  }
}

/** Everything the scan found, as `where: needle` lines; empty when the erasure left nothing. */
export async function scanForErased(input: ScanInput): Promise<string[]> {
  const needles = input.needles.filter((needle) => needle.length > 0);
  if (needles.length === 0) throw new Error("The scan needs something to look for.");
  const found: string[] = [];
  const tables = await scanD1(needles, found);
  if (tables < 10) throw new Error(`The scan read only ${tables} D1 tables: the migrations are not applied.`);
  for (const thread of input.threads) {
    const name = await threadObjectName(env.DO_NAME_KEY, {
      tenantId: thread.tenantId,
      environment: thread.environment ?? "development",
      agentId: thread.agentId,
      threadId: thread.threadId,
    });
    for (const cell of await objectDump(env.THREAD.get(env.THREAD.idFromName(name))))
      hits(`thread ${thread.threadId} ${cell.where}`, cell.text, needles, found);
  }
  for (const [label, stub] of [
    ["events", env.EVENTS.get(env.EVENTS.idFromName(input.tenantId))],
    ["quota", env.QUOTA.get(env.QUOTA.idFromName(input.tenantId))],
  ] as const) {
    for (const cell of await objectDump(stub)) hits(`${label} ${cell.where}`, cell.text, needles, found);
  }
  await scanAttachments(input.tenantId, needles, found);
  return found;
}

/** Fails the test when the erasure left the subject id or any erased text anywhere. */
export async function expectNothingLeft(input: ScanInput): Promise<void> {
  expect(await scanForErased(input)).toEqual([]);
}
