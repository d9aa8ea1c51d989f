// The tool_calls table: each tool a run invoked, with its redacted input and output, queued for the D1 projection.
import { z } from "zod";
import { fail, ok, type Result } from "../../errors";
import { parseJsonColumn } from "../json-column";
import { enqueueOutbox } from "../projection/outbox";
import { createRedactor, type JsonValue, type Redactor } from "../redact";
import { findRun } from "./run-store";
import { invalidRunRecord, type RunStoreOptions, recordIdSchema } from "./run-types";

export const TOOL_CALL_STATUSES = ["started", "finished", "error", "blocked"] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

export interface ToolCall {
  id: string;
  runId: string;
  name: string;
  input: JsonValue;
  output: JsonValue | null;
  status: ToolCallStatus;
  createdAt: number;
  endedAt: number | null;
  revision: number;
}

const toolCallRowSchema = z.object({
  id: z.string(),
  run_id: z.string(),
  name: z.string(),
  input_json: z.string(),
  output_json: z.string().nullable(),
  status: z.enum(TOOL_CALL_STATUSES),
  created_at: z.number().int(),
  ended_at: z.number().int().nullable(),
  revision: z.number().int(),
});

const TOOL_CALL_COLUMNS = "id, run_id, name, input_json, output_json, status, created_at, ended_at, revision";

function toToolCall(row: unknown): ToolCall {
  const r = toolCallRowSchema.parse(row);
  return {
    id: r.id,
    runId: r.run_id,
    name: r.name,
    input: parseJsonColumn(r.input_json),
    output: r.output_json === null ? null : parseJsonColumn(r.output_json),
    status: r.status,
    createdAt: r.created_at,
    endedAt: r.ended_at,
    revision: r.revision,
  };
}

export class ToolCallStore {
  readonly #storage: DurableObjectStorage;
  readonly #now: () => number;
  readonly #redactor: Redactor;
  readonly #newId: () => string;

  constructor(storage: DurableObjectStorage, options: RunStoreOptions) {
    this.#storage = storage;
    this.#now = options.now;
    this.#redactor = createRedactor(options.secrets ?? []);
    this.#newId = options.newId ?? (() => crypto.randomUUID());
  }

  /** Records a tool call as started. */
  record(call: { id?: string; runId: string; name: string; input: unknown }): Result<ToolCall> {
    const parsedName = z.string().min(1).max(128).safeParse(call.name);
    if (!parsedName.success) return invalidRunRecord(parsedName.error);
    const parsedId = recordIdSchema.optional().safeParse(call.id);
    if (!parsedId.success) return invalidRunRecord(parsedId.error);
    const input = this.#redactor.value(call.input);
    return this.#storage.transactionSync((): Result<ToolCall> => {
      if (!findRun(this.#storage, call.runId)) return fail("not_found", "Run not found.");
      const callId = parsedId.data ?? this.#newId();
      if (this.get(callId)) return fail("conflict", "A tool call with this id already exists.", { callId });
      const now = this.#now();
      this.#storage.sql.exec(
        `INSERT INTO tool_calls (id, run_id, name, input_json, output_json, status, created_at, revision)
         VALUES (?, ?, ?, ?, NULL, 'started', ?, 1)`,
        callId,
        call.runId,
        parsedName.data,
        JSON.stringify(input),
        now,
      );
      return ok(this.#enqueue(callId, now));
    });
  }

  /** Ends a started tool call with its (redacted) output. */
  complete(
    callId: string,
    result: { status: Exclude<ToolCallStatus, "started">; output?: unknown },
  ): Result<ToolCall> {
    const status = z.enum(["finished", "error", "blocked"]).safeParse(result.status);
    if (!status.success) return invalidRunRecord(status.error);
    const output = this.#redactor.value(result.output ?? null);
    return this.#storage.transactionSync((): Result<ToolCall> => {
      const existing = this.get(callId);
      if (!existing) return fail("not_found", "Tool call not found.");
      if (existing.status !== "started") {
        return fail("conflict", "The tool call has already ended.", { status: existing.status });
      }
      const now = this.#now();
      this.#storage.sql.exec(
        "UPDATE tool_calls SET status = ?, output_json = ?, ended_at = ?, revision = revision + 1 WHERE id = ?",
        status.data,
        JSON.stringify(output),
        now,
        callId,
      );
      return ok(this.#enqueue(callId, now));
    });
  }

  get(callId: string): ToolCall | null {
    const row = this.#storage.sql
      .exec(`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE id = ?`, callId)
      .toArray()[0];
    return row ? toToolCall(row) : null;
  }

  /** A run's tool calls in the order they started. */
  forRun(runId: string): ToolCall[] {
    return this.#storage.sql
      .exec(`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE run_id = ? ORDER BY created_at, id`, runId)
      .toArray()
      .map(toToolCall);
  }

  /** Queues the call as it now is, in the transaction that changed it. */
  #enqueue(callId: string, now: number): ToolCall {
    const call = this.get(callId);
    if (!call) throw new Error("A tool call vanished inside its own transaction.");
    enqueueOutbox(
      this.#storage,
      { kind: "tool_call", refId: call.id, version: call.revision, payload: { ...call } },
      now,
    );
    return call;
  }
}
