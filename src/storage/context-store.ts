// The thread object's copy of its context variables (SPEC §8), kept in `meta` with the registry version it came from.
import { z } from "zod";
import { type ContextVariables, contextVariablesSchema } from "../control/context-variables";
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
    return true;
  });
}
