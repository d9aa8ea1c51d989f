// The thread object's copy of its context variables (docs/protocol.md) and tool policy (docs/tools.md#tool-policy), kept in
// `meta` with the registry version it came from, and every version it adopted, so a run's instructions and tools can
// be rendered again with the context it ran under.
import { z } from "zod";
import { type ContextVariables, contextVariablesSchema } from "../../control/context-variables";
import {
  normalToolPolicy,
  parseToolPolicyText,
  type ToolPolicy,
  toolPolicySchema,
  toolPolicyText,
} from "../../control/tool-policy";
import { readMeta, writeMeta } from "./thread-meta";

const CONTEXT_KEY = "launch_context";

export interface ThreadContext {
  /** The registry's `context_version` this copy was taken at; 0 when the thread never had a context. */
  version: number;
  variables: ContextVariables;
  /** The launch's tool policy; absent: none, every tool of the agent. */
  toolPolicy?: ToolPolicy;
}

export const threadContextSchema = z
  .strictObject({
    version: z.number().int().nonnegative(),
    variables: contextVariablesSchema,
    toolPolicy: toolPolicySchema.optional(),
  })
  .transform((context): ThreadContext => {
    const toolPolicy = normalToolPolicy(context.toolPolicy);
    return {
      version: context.version,
      variables: context.variables,
      ...(toolPolicy !== null ? { toolPolicy } : {}),
    };
  });

const NONE: ThreadContext = { version: 0, variables: {} };

/**
 * The copy as last read, per object: every run reads it, and only this file writes it (docs/decisions.md "Statements
 * per turn"). Dropped before every write, and filled only by reads, which come before the writes of any transaction
 * here, so a rolled-back write cannot leave a copy it wrote.
 */
const heldCopies = new WeakMap<DurableObjectStorage, ThreadContext>();

export function readThreadContext(storage: DurableObjectStorage): ThreadContext {
  const kept = heldCopies.get(storage);
  if (kept !== undefined) return kept;
  const read = parseThreadContext(storage);
  heldCopies.set(storage, read);
  return read;
}

function parseThreadContext(storage: DurableObjectStorage): ThreadContext {
  const text = readMeta(storage, CONTEXT_KEY);
  if (text === null) return NONE;
  try {
    const parsed = threadContextSchema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // Unreadable: as below.
  }
  // A copy this build cannot read counts as none (so the next launch's delivery is adopted), but one hiding every
  // tool: a fault never widens what the model may call.
  return { ...NONE, toolPolicy: { allow: [] } };
}

/**
 * Keeps `next` when it is newer than the copy held (versions only grow, so concurrent deliveries settle on the
 * latest launch's); true when it was kept.
 */
export function adoptThreadContext(storage: DurableObjectStorage, next: ThreadContext): boolean {
  return storage.transactionSync(() => {
    if (next.version <= readThreadContext(storage).version) return false;
    heldCopies.delete(storage);
    writeMeta(storage, CONTEXT_KEY, JSON.stringify(next));
    keepContextVersion(storage, next);
    return true;
  });
}

/** Keeps `context` under its version (once; versions never change what they hold). Version 0 is "none", not kept. */
export function keepContextVersion(storage: DurableObjectStorage, context: ThreadContext): void {
  if (context.version === 0) return;
  storage.sql.exec(
    `INSERT INTO context_versions (version, variables_json, tool_policy_json) VALUES (?, ?, ?)
     ON CONFLICT (version) DO NOTHING`,
    context.version,
    JSON.stringify(context.variables),
    toolPolicyText(context.toolPolicy),
  );
}

/** What the thread held at one context version: its variables and its tool policy (null: none). */
export interface ContextAtVersion {
  variables: ContextVariables;
  toolPolicy: ToolPolicy | null;
}

/** The context the thread held at `version` (none for 0), or null when that version was never adopted here. */
export function readContextVersion(storage: DurableObjectStorage, version: number): ContextAtVersion | null {
  if (version === 0) return { variables: {}, toolPolicy: null };
  const row = storage.sql
    .exec("SELECT variables_json, tool_policy_json FROM context_versions WHERE version = ?", version)
    .toArray()[0];
  if (row === undefined) return null;
  try {
    const parsed = contextVariablesSchema.safeParse(JSON.parse(String(row.variables_json)));
    if (!parsed.success) return null;
    const policy = row.tool_policy_json;
    return {
      variables: parsed.data,
      toolPolicy: parseToolPolicyText(policy === null ? null : String(policy)),
    };
  } catch {
    return null;
  }
}

/**
 * Zero retention's idle purge (docs/privacy.md#zero-retention): the variables go, the version stays, so a delivery of
 * the same (already purged) version is not adopted again; the kept versions are blanked too. The tool policy stays:
 * it holds nothing about the person, and dropping it would hand the model every tool. Call inside the purge's
 * transaction.
 */
export function blankThreadContext(storage: DurableObjectStorage): void {
  const held = readThreadContext(storage);
  heldCopies.delete(storage);
  if (held.version > 0) writeMeta(storage, CONTEXT_KEY, JSON.stringify({ ...held, variables: {} }));
  storage.sql.exec("UPDATE context_versions SET variables_json = '{}' WHERE variables_json <> '{}'");
}
