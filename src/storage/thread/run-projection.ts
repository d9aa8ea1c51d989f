// One run as the D1 projection sends it (the run, its audited input digest, its usage), read in one statement.
import { z } from "zod";
import { RUN_COLUMNS, toRun } from "./run-row";
import type { Run } from "./run-store";
import type { UsageRecord } from "./usage-store";

/** What the projection sends of one run: the run, its audited input digest and its usage, read in one statement. */
export interface RunProjection {
  run: Run;
  /** The first model call's input digest once the run's audit record is complete; null before. */
  inputDigest: string | null;
  usage: UsageRecord[];
}

const usageListSchema = z.array(
  z.tuple([z.number().int(), z.string(), z.string(), z.number().int(), z.number().int(), z.number()]),
);

/** One run as the projection sends it, or null when it is gone. */
export function findRunProjection(storage: DurableObjectStorage, runId: string): RunProjection | null {
  const row = storage.sql
    .exec(
      `SELECT ${RUN_COLUMNS},
         CASE WHEN prompt_builder IS NULL OR artifact_digest IS NULL OR context_version IS NULL THEN NULL
              ELSE input_digest END AS audited_input_digest,
         (SELECT json_group_array(json_array(turn, provider, model, input_tokens, output_tokens, created_at))
          FROM (SELECT * FROM usage WHERE run_id = ?1 ORDER BY turn)) AS usage_json
       FROM runs WHERE id = ?1`,
      runId,
    )
    .toArray()[0];
  if (row === undefined) return null;
  const digest = row.audited_input_digest;
  const usage = usageListSchema.parse(JSON.parse(String(row.usage_json)));
  return {
    run: toRun(row),
    inputDigest: typeof digest === "string" ? digest : null,
    usage: usage.map(([turn, provider, model, inputTokens, outputTokens, createdAt]) => ({
      runId,
      turn,
      provider,
      model,
      inputTokens,
      outputTokens,
      createdAt,
    })),
  };
}
