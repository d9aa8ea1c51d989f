// A run's audit record in the `runs` table: which builder, artifact and context made its model input, and its digest.
import { z } from "zod";

export interface RunAudit {
  promptBuilder: string;
  artifactDigest: string;
  /** The thread's context version in force for the run (0: none). */
  contextVersion: number;
  /** Null when digesting the input failed (a bug, logged); the record is written once it is known. */
  inputDigest: string | null;
}

const auditRowSchema = z.object({
  prompt_builder: z.string().nullable(),
  artifact_digest: z.string().nullable(),
  context_version: z.number().int().nullable(),
  input_digest: z.string().nullable(),
});

/**
 * Records what a run's model input was made of, with its digest (null when digesting failed), in one row write once
 * the run's first model call is under way.
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

/** The audit record of a run; null for an unknown run or one that never reached a model. */
export function readRunAudit(storage: DurableObjectStorage, runId: string): RunAudit | null {
  const raw = storage.sql
    .exec(
      "SELECT prompt_builder, artifact_digest, context_version, input_digest FROM runs WHERE id = ?",
      runId,
    )
    .toArray()[0];
  if (raw === undefined) return null;
  const row = auditRowSchema.parse(raw);
  if (row.prompt_builder === null || row.artifact_digest === null || row.context_version === null)
    return null;
  return {
    promptBuilder: row.prompt_builder,
    artifactDigest: row.artifact_digest,
    contextVersion: row.context_version,
    inputDigest: row.input_digest,
  };
}
