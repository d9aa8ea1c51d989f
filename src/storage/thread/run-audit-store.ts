// A run's audit record in the `runs` table: which builder, artifact and context made its model input, and the digest
// of every model call's input (docs/storage.md, "Audit record").
import { z } from "zod";

export interface RunAudit {
  promptBuilder: string;
  artifactDigest: string;
  /** The thread's context version in force for the run (0: none). */
  contextVersion: number;
  /** The first model call's; null when digesting the input failed (a bug, logged). */
  inputDigest: string | null;
}

/** One model call of a run: its step (0 first) and its input's digest (null when digesting failed, a bug). */
export interface RunStepDigest {
  step: number;
  inputDigest: string | null;
}

/** The record as read back: every model call the run made, in order (`steps[0]` is `inputDigest`'s). */
export interface RunAuditRecord extends RunAudit {
  steps: RunStepDigest[];
}

const auditRowSchema = z.object({
  prompt_builder: z.string().nullable(),
  artifact_digest: z.string().nullable(),
  context_version: z.number().int().nullable(),
  input_digest: z.string().nullable(),
  later_input_digests_json: z.string().nullable(),
});

const laterDigestsSchema = z.array(z.string().nullable());

function laterDigests(json: string | null): (string | null)[] {
  if (json === null) return [];
  const parsed = laterDigestsSchema.safeParse(JSON.parse(json));
  if (!parsed.success) throw new Error("A run's stored step digests are unreadable.");
  return parsed.data;
}

/**
 * Records what a run's model input was made of, with its first model call's digest (null when digesting failed), in
 * one row write once that call is under way.
 */
export function recordRunAudit(storage: DurableObjectStorage, runId: string, audit: RunAudit): void {
  storage.sql.exec(
    "UPDATE runs SET prompt_builder = ?, artifact_digest = ?, context_version = ?, input_digest = ? WHERE id = ?",
    audit.promptBuilder,
    audit.artifactDigest,
    audit.contextVersion,
    audit.inputDigest,
    runId,
  );
}

/**
 * Records the input digest of a later model call of the run (`step` ≥ 1, after a tool round trip), in one row write;
 * a step skipped in between (never expected) reads as a failed digest.
 */
export function recordRunStepDigest(
  storage: DurableObjectStorage,
  runId: string,
  step: number,
  inputDigest: string | null,
): void {
  if (!Number.isSafeInteger(step) || step < 1) throw new Error(`Step ${step} is not a later model call.`);
  const raw = storage.sql.exec("SELECT later_input_digests_json FROM runs WHERE id = ?", runId).toArray()[0];
  if (raw === undefined) return;
  const later = laterDigests(z.string().nullable().parse(raw.later_input_digests_json));
  while (later.length < step - 1) later.push(null);
  later[step - 1] = inputDigest;
  storage.sql.exec("UPDATE runs SET later_input_digests_json = ? WHERE id = ?", JSON.stringify(later), runId);
}

/**
 * The audit record of a run with every model call it made; null for an unknown run or one that never reached a
 * model. A run recorded before later calls were (thread schema 18) has one step.
 */
export function readRunAudit(storage: DurableObjectStorage, runId: string): RunAuditRecord | null {
  const raw = storage.sql
    .exec(
      `SELECT prompt_builder, artifact_digest, context_version, input_digest, later_input_digests_json
       FROM runs WHERE id = ?`,
      runId,
    )
    .toArray()[0];
  if (raw === undefined) return null;
  const row = auditRowSchema.parse(raw);
  if (row.prompt_builder === null || row.artifact_digest === null || row.context_version === null)
    return null;
  const digests = [row.input_digest, ...laterDigests(row.later_input_digests_json)];
  return {
    promptBuilder: row.prompt_builder,
    artifactDigest: row.artifact_digest,
    contextVersion: row.context_version,
    inputDigest: row.input_digest,
    steps: digests.map((inputDigest, step) => ({ step, inputDigest })),
  };
}
