// A run's audit as its turn runs (docs/api.md#audit-record): the digest of every model call's input, recorded off the hot path.
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import { inputDigest, type ModelInput } from "../../models/model-input";
import { type RunAudit, recordRunAudit, recordRunStepDigest } from "../../storage/thread/run-audit-store";

export interface RunAuditor {
  /** The turn's `onModelCall`: takes the prompt a model call is handed and returns at once. */
  modelCall: (call: { step: number; prompt: LanguageModelV4Prompt }) => void;
  /** Resolves once every call seen so far is recorded (never rejects); awaited before the run is sealed. */
  settled: () => Promise<void>;
}

/**
 * Records the run's audit: what made its model input (with the first call's digest, in one row write, as before),
 * then each later call's digest as it starts. Each call is digested once it is under way (the canonical JSON and the
 * hash run while the request is in flight, never before the first delta can be asked for), one after another so the
 * rows are written in step order. A digest that fails (a bug) is logged and its step kept without it; the run itself
 * is never failed for it.
 */
export function runAuditor(
  storage: DurableObjectStorage,
  runId: string,
  made: Omit<RunAudit, "inputDigest">,
  inputOf: (prompt: LanguageModelV4Prompt) => ModelInput,
): RunAuditor {
  let recorded: Promise<void> = Promise.resolve();
  return {
    modelCall: ({ step, prompt }) => {
      recorded = recorded.then(() => recordStep(storage, runId, made, step, inputOf(prompt)));
    },
    settled: () => recorded,
  };
}

async function recordStep(
  storage: DurableObjectStorage,
  runId: string,
  made: Omit<RunAudit, "inputDigest">,
  step: number,
  input: ModelInput,
): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  let digest: string | null = null;
  try {
    digest = await inputDigest(input);
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", message: "input digest failed", step, error: String(error) }),
    );
  }
  try {
    if (step === 0) recordRunAudit(storage, runId, { ...made, inputDigest: digest });
    else recordRunStepDigest(storage, runId, step, digest);
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", message: "run audit failed", step, error: String(error) }),
    );
  }
}
