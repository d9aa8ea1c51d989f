// The run_actions and run_parks tables: what a waiting run asked a person (an approval, a client tool's answer), how
// each was settled, and the model calls the run continues from (docs/tools.md#approvals).
import { z } from "zod";
import type { ApprovalDecision, Approver, Decider } from "../../shared/protocol";
import { parseJsonColumn } from "../json-column";
import { createRedactor, type JsonValue, type Redactor } from "../redact";

export const ACTION_STATUSES = ["pending", "approved", "denied", "expired", "cancelled", "answered"] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];
export type ActionKind = "approval" | "client";

export interface RunAction {
  id: string;
  runId: string;
  kind: ActionKind;
  toolCallId: string;
  name: string;
  input: JsonValue;
  inputDigest: string;
  artifactDigest: string;
  /** Approvals: who may decide. */
  approver: Approver | null;
  onTimeout: "deny" | "handoff" | null;
  title: string | null;
  description: string | null;
  createdAt: number;
  expiresAt: number;
  status: ActionStatus;
  decidedBy: Decider | null;
  reason: string | null;
  decidedAt: number | null;
  /** A client tool's answer (or the error the model gets instead); approvals: the approved tool's answer. */
  output: JsonValue | null;
  isError: boolean;
  revision: number;
}

const rowSchema = z.object({
  id: z.string(),
  run_id: z.string(),
  kind: z.enum(["approval", "client"]),
  tool_call_id: z.string(),
  name: z.string(),
  input_json: z.string(),
  input_digest: z.string(),
  artifact_digest: z.string(),
  approver: z.enum(["user", "tenant", "any"]).nullable(),
  on_timeout: z.enum(["deny", "handoff"]).nullable(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  created_at: z.number().int(),
  expires_at: z.number().int(),
  status: z.enum(ACTION_STATUSES),
  decided_by: z.enum(["user", "tenant", "timeout", "system"]).nullable(),
  reason: z.string().nullable(),
  decided_at: z.number().int().nullable(),
  output_json: z.string().nullable(),
  is_error: z.number().int(),
  revision: z.number().int(),
});

const COLUMNS =
  "id, run_id, kind, tool_call_id, name, input_json, input_digest, artifact_digest, approver, on_timeout, title, description, created_at, expires_at, status, decided_by, reason, decided_at, output_json, is_error, revision";

function toAction(row: unknown): RunAction {
  const r = rowSchema.parse(row);
  return {
    id: r.id,
    runId: r.run_id,
    kind: r.kind,
    toolCallId: r.tool_call_id,
    name: r.name,
    input: parseJsonColumn(r.input_json),
    inputDigest: r.input_digest,
    artifactDigest: r.artifact_digest,
    approver: r.approver,
    onTimeout: r.on_timeout,
    title: r.title,
    description: r.description,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    status: r.status,
    decidedBy: r.decided_by,
    reason: r.reason,
    decidedAt: r.decided_at,
    output: r.output_json === null ? null : parseJsonColumn(r.output_json),
    isError: r.is_error === 1,
    revision: r.revision,
  };
}

export interface NewAction {
  id: string;
  runId: string;
  kind: ActionKind;
  toolCallId: string;
  name: string;
  input: JsonValue;
  inputDigest: string;
  artifactDigest: string;
  approver?: Approver;
  onTimeout?: "deny" | "handoff";
  title?: string;
  description?: string;
  expiresAt: number;
}

/** How an action is settled: a decision (approvals), an answer (client tools), the clock, or the thread. */
export interface ActionSettlement {
  status: Exclude<ActionStatus, "pending">;
  decidedBy: Decider;
  reason?: string | null;
  output?: JsonValue;
  isError?: boolean;
}

/** What a decision records: its wire form. */
export const decisionOf = (status: ActionStatus): ApprovalDecision =>
  status === "approved" ? "approve" : "deny";

export class ActionStore {
  readonly #storage: DurableObjectStorage;
  readonly #now: () => number;
  readonly #redactor: Redactor;

  constructor(storage: DurableObjectStorage, options: { now: () => number; secrets?: readonly string[] }) {
    this.#storage = storage;
    this.#now = options.now;
    this.#redactor = createRedactor(options.secrets ?? []);
  }

  create(input: NewAction): RunAction {
    const row = this.#storage.sql
      .exec(
        `INSERT INTO run_actions (id, run_id, kind, tool_call_id, name, input_json, input_digest, artifact_digest,
           approver, on_timeout, title, description, created_at, expires_at, status)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending') RETURNING ${COLUMNS}`,
        input.id,
        input.runId,
        input.kind,
        input.toolCallId,
        input.name,
        JSON.stringify(this.#redactor.value(input.input)),
        input.inputDigest,
        input.artifactDigest,
        input.approver ?? null,
        input.onTimeout ?? null,
        input.title ?? null,
        input.description ?? null,
        this.#now(),
        input.expiresAt,
      )
      .one();
    return toAction(row);
  }

  get(id: string): RunAction | null {
    const row = this.#storage.sql.exec(`SELECT ${COLUMNS} FROM run_actions WHERE id = ?`, id).toArray()[0];
    return row === undefined ? null : toAction(row);
  }

  /** A run's actions in the order they were asked. */
  ofRun(runId: string): RunAction[] {
    return this.#storage.sql
      .exec(`SELECT ${COLUMNS} FROM run_actions WHERE run_id = ? ORDER BY created_at, id`, runId)
      .toArray()
      .map(toAction);
  }

  /** The pending client request for a tool call, if any (a tool call waits on at most one at a time). */
  pendingClientCall(toolCallId: string): RunAction | null {
    const row = this.#storage.sql
      .exec(
        `SELECT ${COLUMNS} FROM run_actions WHERE kind = 'client' AND tool_call_id = ? ORDER BY created_at DESC LIMIT 1`,
        toolCallId,
      )
      .toArray()[0];
    return row === undefined ? null : toAction(row);
  }

  /** Every action still waiting, soonest to expire first. */
  pending(): RunAction[] {
    return this.#storage.sql
      .exec(`SELECT ${COLUMNS} FROM run_actions WHERE status = 'pending' ORDER BY expires_at`)
      .toArray()
      .map(toAction);
  }

  /** Settles a pending action; null when it was settled already (the first decision wins). */
  settle(id: string, how: ActionSettlement): RunAction | null {
    const row = this.#storage.sql
      .exec(
        `UPDATE run_actions SET status = ?, decided_by = ?, reason = ?, decided_at = ?, output_json = ?,
           is_error = ?, revision = revision + 1
         WHERE id = ? AND status = 'pending' RETURNING ${COLUMNS}`,
        how.status,
        how.decidedBy,
        how.reason == null ? null : this.#redactor.text(how.reason),
        this.#now(),
        how.output === undefined ? null : JSON.stringify(this.#redactor.value(how.output)),
        how.isError ? 1 : 0,
        id,
      )
      .toArray()[0];
    return row === undefined ? null : toAction(row);
  }

  /** The answer an approved server tool gave, kept on its approval. */
  recordOutput(id: string, output: JsonValue, isError: boolean): void {
    this.#storage.sql.exec(
      "UPDATE run_actions SET output_json = ?, is_error = ?, revision = revision + 1 WHERE id = ?",
      JSON.stringify(this.#redactor.value(output)),
      isError ? 1 : 0,
      id,
    );
  }

  // ---- the model calls a waiting run continues from ----

  /** Keeps a waiting run's steps, and the verified subject whose message started it (its tools' identity). */
  park(runId: string, steps: JsonValue, subject: string | null): void {
    this.#storage.sql.exec(
      `INSERT INTO run_parks (run_id, steps_json, subject, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET steps_json = excluded.steps_json`,
      runId,
      JSON.stringify(this.#redactor.value(steps)),
      subject,
      this.#now(),
    );
  }

  parkedSubject(runId: string): string | null {
    const row = this.#storage.sql
      .exec<{ subject: string | null }>("SELECT subject FROM run_parks WHERE run_id = ?", runId)
      .toArray()[0];
    return row?.subject ?? null;
  }

  parked(runId: string): JsonValue | null {
    const row = this.#storage.sql
      .exec<{ steps_json: string }>("SELECT steps_json FROM run_parks WHERE run_id = ?", runId)
      .toArray()[0];
    return row === undefined ? null : parseJsonColumn(row.steps_json);
  }

  unpark(runId: string): void {
    this.#storage.sql.exec("DELETE FROM run_parks WHERE run_id = ?", runId);
  }
}
