// A run's model input rebuilt from storage (docs/api.md): its branch, tool history, context (variables and tool policy)
// and artifact, by its builder.
import { expandContext } from "../../control/context-template";
import { fail, ok, type Result } from "../../errors";
import { inputDigest, type ModelInput, modelInputOf } from "../../models/model-input";
import { PROMPT_BUILDERS, type PromptBuilder, promptBuilder } from "../../models/prompt-builders";
import { readContextVersion } from "../../storage/thread/context-store";
import { EntryStore } from "../../storage/thread/entry-store";
import { readRunAudit } from "../../storage/thread/run-audit-store";
import { findRun } from "../../storage/thread/run-store";
import { modelTools } from "../../tools/model-tools";
import type { RunInputView } from "../contract";
import { PromptHistory } from "./prompt-history";
import { artifactOfRun, contextBudget, type VersionBindings } from "./run-artifact";

const noInput = () =>
  fail(
    "not_found",
    "This run has no stored model input: it never reached a model (a handoff, a refusal) or ran before inputs were recorded.",
  );

/**
 * Rebuilds the first model call of run `runId`: the branch up to its user message read back exactly as a turn reads
 * it (newest first, to the budget), the context version it ran under (its variables, and its tool policy for the
 * tools listed: docs/tools.md#tool-policy), the artifact it ran on, and the prompt builder it recorded (`builders` is
 * the registry; tests pass one with more builders). Never a stored copy of the prompt.
 */
export async function rebuildRunInput(
  storage: DurableObjectStorage,
  versions: VersionBindings,
  runId: string,
  builders: Readonly<Record<string, PromptBuilder>> = PROMPT_BUILDERS,
): Promise<Result<RunInputView>> {
  const run = findRun(storage, runId);
  if (run === null) return fail("not_found", "Run not found.");
  const audit = readRunAudit(storage, runId);
  if (audit === null || audit.inputDigest === null || run.userEntryId === null) return noInput();
  const found = await artifactOfRun(versions, audit.artifactDigest);
  if (!found.ok) return found;
  const ran = found.value;
  const context = readContextVersion(storage, audit.contextVersion);
  if (context === null) return fail("not_found", "The context this run ran under is no longer stored.");
  const build = promptBuilder(audit.promptBuilder, builders);
  if (build === null) return fail("internal", `Prompt builder ${audit.promptBuilder} is not registered.`);
  // Read only: the clock is never consulted.
  const entries = new EntryStore(storage, { now: Date.now });
  const userEntry = entries.get(run.userEntryId);
  if (userEntry === null) return fail("not_found", "The run's message is no longer stored.");
  // Zero retention blanks every entry's text at once (docs/privacy.md): the input cannot be rebuilt, and saying so beats an
  // answer that fails its own digest.
  const body = userEntry.body;
  if (typeof body === "object" && body !== null && "purged" in body && body.purged === true) {
    return fail(
      "not_found",
      "This run's input is no longer stored: the thread keeps no text (zero retention).",
    );
  }

  const budget = contextBudget(ran.artifact);
  const history = new PromptHistory(entries, budget).historyFor(userEntry);
  const messages = build({
    instructions: expandContext(ran.artifact.instructions, context.variables),
    branch: history,
    maxContextTokens: budget,
  });
  const input: ModelInput = modelInputOf(
    ran.artifact.model,
    messages,
    modelTools(ran.artifact, context.toolPolicy),
  );
  const digest = await inputDigest(input);
  return ok({
    runId,
    inputDigest: audit.inputDigest,
    promptBuilder: audit.promptBuilder,
    artifactDigest: audit.artifactDigest,
    agentVersion: ran.version,
    contextVersion: audit.contextVersion,
    userEntryId: userEntry.id,
    ...input,
    verified: digest === audit.inputDigest,
  });
}
