// A `runs` row read back into a run: its columns in one order and a hand-written check of each, not zod.

import { ERROR_REASONS } from "../../shared/error-reasons";
import type { ErrorCode, ErrorReason } from "../../shared/errors";
import { ERROR_CODES } from "../../shared/errors";
import { RUN_STATUSES, type RunStatus } from "../../shared/protocol";
import type { Run } from "./run-store";

export const RUN_COLUMNS =
  "id, status, idempotency_key, user_entry_id, assistant_entry_id, parent_entry_id, created_at, started_at, ended_at, abort_reason, error_code, error_message, error_reason, version_id, first_delta_ms, revision";

const isText = (v: unknown): v is string => typeof v === "string";
const textOrNull = (v: unknown): v is string | null => v === null || typeof v === "string";
const isInteger = (v: unknown): v is number => Number.isSafeInteger(v);
const integerOrNull = (v: unknown): v is number | null => v === null || Number.isSafeInteger(v);
const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: unknown): v is T =>
    typeof v === "string" && (values as readonly string[]).includes(v);
const orNull =
  <T>(check: (v: unknown) => v is T) =>
  (v: unknown): v is T | null =>
    v === null || check(v);

/** Each column's check: rows come only from this object's own writes, so no zod parse per row (B4's CPU). */
const RUN_ROW_CHECKS: Readonly<Record<string, (v: unknown) => boolean>> = {
  id: isText,
  status: oneOf(RUN_STATUSES),
  idempotency_key: textOrNull,
  user_entry_id: textOrNull,
  assistant_entry_id: textOrNull,
  parent_entry_id: textOrNull,
  created_at: isInteger,
  started_at: integerOrNull,
  ended_at: integerOrNull,
  abort_reason: textOrNull,
  error_code: orNull(oneOf(ERROR_CODES)),
  error_message: textOrNull,
  error_reason: orNull(oneOf(ERROR_REASONS)),
  version_id: textOrNull,
  first_delta_ms: integerOrNull,
  revision: isInteger,
};

interface RunRow {
  id: string;
  status: RunStatus;
  idempotency_key: string | null;
  user_entry_id: string | null;
  assistant_entry_id: string | null;
  parent_entry_id: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  abort_reason: string | null;
  error_code: ErrorCode | null;
  error_message: string | null;
  error_reason: ErrorReason | null;
  version_id: string | null;
  first_delta_ms: number | null;
  revision: number;
}

/** A `runs` row as this object wrote it; one that does not match names the column, never its value. */
export function toRun(row: Record<string, unknown>): Run {
  for (const column in RUN_ROW_CHECKS) {
    if (!RUN_ROW_CHECKS[column]?.(row[column])) {
      throw new Error(`runs row: ${column} does not hold a valid value`);
    }
  }
  const r = row as unknown as RunRow;
  return {
    id: r.id,
    status: r.status,
    idempotencyKey: r.idempotency_key,
    userEntryId: r.user_entry_id,
    assistantEntryId: r.assistant_entry_id,
    parentEntryId: r.parent_entry_id,
    createdAt: r.created_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    abortReason: r.abort_reason,
    error:
      r.error_code === null
        ? null
        : {
            code: r.error_code,
            ...(r.error_reason !== null ? { reason: r.error_reason } : {}),
            message: r.error_message ?? "",
          },
    versionId: r.version_id,
    firstDeltaMs: r.first_delta_ms,
    revision: r.revision,
  };
}
