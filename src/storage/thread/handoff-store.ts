// The thread's mode (docs/protocol.md handoff) in its `meta` table: durable across eviction, read by `ready` and the projection.
import { z } from "zod";
import type { ThreadMode } from "../../shared/protocol";
import { appendKeyEntryId } from "./append-keys";
import { deleteMeta, readMeta, writeMeta } from "./thread-meta";

/** Set while a person handles the thread; absent in `agent` mode. */
export const HANDOFF_KEY = "handoff";
/** Set by the model's `request_handoff` during a run; the handoff starts when that run has ended. */
export const HANDOFF_REQUESTED_KEY = "handoff_requested";

const handoffSchema = z.object({
  agentName: z.string().optional(),
  /** Epoch milliseconds. */
  since: z.number(),
  by: z.enum(["tenant", "model"]),
});
export type HandoffState = z.infer<typeof handoffSchema>;

const requestedSchema = z.object({ runId: z.string(), reason: z.string().optional() });
export type ModelHandoffRequest = z.infer<typeof requestedSchema>;

function parsed<T>(schema: z.ZodType<T>, text: string | null): T | null {
  if (text === null) return null;
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

export function readHandoff(storage: DurableObjectStorage): HandoffState | null {
  return parsed(handoffSchema, readMeta(storage, HANDOFF_KEY));
}

export function modeOf(state: HandoffState | null): ThreadMode {
  return state === null ? "agent" : "handoff";
}

export function writeHandoff(storage: DurableObjectStorage, state: HandoffState | null): void {
  if (state === null) deleteMeta(storage, HANDOFF_KEY);
  else writeMeta(storage, HANDOFF_KEY, JSON.stringify(state));
}

/**
 * Objects that read no handoff request and wrote none since: every run's end asks, and the model's request is rare
 * (docs/decisions.md "Statements per turn"). Set only by a read that found none (reads run outside transactions),
 * cleared before a request is written, so a rolled-back write leaves it cleared.
 */
const noRequest = new WeakSet<DurableObjectStorage>();

export function readHandoffRequest(storage: DurableObjectStorage): ModelHandoffRequest | null {
  if (noRequest.has(storage)) return null;
  const text = readMeta(storage, HANDOFF_REQUESTED_KEY);
  if (text === null) noRequest.add(storage);
  return parsed(requestedSchema, text);
}

export function writeHandoffRequest(
  storage: DurableObjectStorage,
  request: ModelHandoffRequest | null,
): void {
  if (request === null) {
    deleteMeta(storage, HANDOFF_REQUESTED_KEY);
    return;
  }
  noRequest.delete(storage);
  writeMeta(storage, HANDOFF_REQUESTED_KEY, JSON.stringify(request));
}

/** The entry a send held during a handoff was stored as (its append key, at no expected parent). */
export function heldSendEntryId(storage: DurableObjectStorage, key: string): string | null {
  return appendKeyEntryId(storage, key, "");
}

/**
 * User messages stored at or after `since` among the thread's newest `window` entries: the send rate of a thread
 * whose sends start no runs (runs count the sends otherwise).
 */
export function recentUserMessages(storage: DurableObjectStorage, since: number, window: number): number {
  const row = storage.sql
    .exec(
      `SELECT COUNT(*) AS n FROM (SELECT role, created_at FROM entries ORDER BY seq DESC LIMIT ?)
       WHERE role = 'user' AND created_at >= ?`,
      window,
      since,
    )
    .one();
  return Number(row.n);
}
