// The artifact a run runs on, found in one place: the run's model, tools, instructions and budget all come from it.
import type { Artifact } from "../control/artifact";
import type { ThreadBinding } from "../storage/pin-store";
import { DEFAULT_CONTEXT_TOKENS } from "./thread-limits";

export interface RunArtifact {
  artifact: Artifact;
  /** The artifact's digest (SPEC §4), recorded on the run. */
  digest: string;
  /** The agent version number it was published as. */
  version: number;
}

/**
 * The artifact a new run runs on. Today that is the thread's pin; a per-thread version change would make it the
 * version in force at the run's place in the tree, and this is where that decision goes.
 */
export function runArtifact(binding: ThreadBinding): RunArtifact {
  return { artifact: binding.artifact, digest: binding.digest, version: binding.version };
}

/**
 * The artifact a stored run ran on, by the digest its audit record holds, or null when this thread no longer has it.
 * It is the pinned artifact (re-verified against its digest when the pin was read).
 */
export function artifactOfRun(binding: ThreadBinding, digest: string): RunArtifact | null {
  return binding.digest === digest ? runArtifact(binding) : null;
}

/** The prompt budget of runs on `artifact`. */
export function contextBudget(artifact: Artifact): number {
  return artifact.limits?.maxContextTokens ?? DEFAULT_CONTEXT_TOKENS;
}
