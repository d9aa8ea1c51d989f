// The thread object's copy of its context variables (docs/protocol.md), kept in `meta` with the registry version it came from,
// and every version it adopted, so a run's instructions can be rendered again with the context it ran under.
import { z } from "zod";
import { type ContextVariables, contextVariablesSchema } from "../../control/context-variables";
import { readMeta, writeMeta } from "./thread-meta";

const CONTEXT_KEY = "launch_context";

export interface ThreadContext {
  /** The registry's `context_version` this copy was taken at; 0 when the thread never had a context. */
  version: number;
  variables: ContextVariables;
}

export const threadContextSchema = z.strictObject({
  version: z.number().int().nonnegative(),
  variables: contextVariablesSchema,
});

const NONE: ThreadContext = { version: 0, variables: {} };

export function readThreadContext(storage: DurableObjectStorage): ThreadContext {
  const text = readMeta(storage, CONTEXT_KEY);
  if (text === null) return NONE;
  try {
    const parsed = threadContextSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : NONE;
  } catch {
    return NONE;
  }
}

/**
 * Keeps `next` when it is newer than the copy held (versions only grow, so concurrent deliveries settle on the
 * latest launch's); true when it was kept.
 */
export function adoptThreadContext(storage: DurableObjectStorage, next: ThreadContext): boolean {
  return storage.transactionSync(() => {
    if (next.version <= readThreadContext(storage).version) return false;
    writeMeta(storage, CONTEXT_KEY, JSON.stringify(next));
    keepContextVersion(storage, next);
    return true;
  });
}

/** Keeps `context` under its version (once; versions never change what they hold). Version 0 is "none", not kept. */
export function keepContextVersion(storage: DurableObjectStorage, context: ThreadContext): void {
  if (context.version === 0) return;
  storage.sql.exec(
    "INSERT INTO context_versions (version, variables_json) VALUES (?, ?) ON CONFLICT (version) DO NOTHING",
    context.version,
    JSON.stringify(context.variables),
  );
}

/** The variables the thread held at `version` ({} for 0), or null when that version was never adopted here. */
export function readContextVersion(storage: DurableObjectStorage, version: number): ContextVariables | null {
  if (version === 0) return {};
  const row = storage.sql
    .exec("SELECT variables_json FROM context_versions WHERE version = ?", version)
    .toArray()[0];
  if (row === undefined) return null;
  try {
    const parsed = contextVariablesSchema.safeParse(JSON.parse(String(row.variables_json)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Zero retention's idle purge (docs/privacy.md#zero-retention): the variables go, the version stays, so a delivery of
 * the same (already purged) version is not adopted again; the kept versions are blanked too. Call inside the purge's
 * transaction.
 */
export function blankThreadContext(storage: DurableObjectStorage): void {
  const held = readThreadContext(storage);
  if (held.version > 0)
    writeMeta(storage, CONTEXT_KEY, JSON.stringify({ version: held.version, variables: {} }));
  storage.sql.exec("UPDATE context_versions SET variables_json = '{}' WHERE variables_json <> '{}'");
}
