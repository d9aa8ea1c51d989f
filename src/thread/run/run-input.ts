// A run's model input rebuilt from storage (docs/api.md): its branch, tool history, context (variables and tool policy)
// and artifact, by its builder, for any model call of the run (a later one adds the turn's own tool round trips).
import type { LanguageModelV4Message } from "@ai-sdk/provider";
import { expandContext } from "../../control/context-template";
import { fail, ok, type Result } from "../../errors";
import { inputDigest, type ModelInput, modelInputOf } from "../../models/model-input";
import { PROMPT_BUILDERS, type PromptBuilder, promptBuilder } from "../../models/prompt-builders";
import { type TurnStep, toolRoundMessages } from "../../models/turn";
import { ActionStore } from "../../storage/thread/action-store";
import { readContextVersion } from "../../storage/thread/context-store";
import { EntryStore } from "../../storage/thread/entry-store";
import { readRunAudit } from "../../storage/thread/run-audit-store";
import { findRun, type Run } from "../../storage/thread/run-store";
import { modelTools } from "../../tools/model-tools";
import type { RunInputView } from "../contract";
import { type AttachmentBytes, withAttachmentBytes } from "./prompt-attachments";
import { PromptHistory } from "./prompt-history";
import { artifactOfRun, contextBudget, type VersionBindings } from "./run-artifact";
import { type StoredToolCall, storedToolCalls, toolCallsOfSteps } from "./tool-history";

const noInput = () =>
  fail(
    "not_found",
    "This run has no stored model input: it never reached a model (a handoff, a refusal) or ran before inputs were recorded.",
  );

export interface RebuildOptions {
  /** The model call to rebuild (0 first); the run's last when absent. */
  step?: number;
  /** The prompt builder registry; tests pass one with more builders. */
  builders?: Readonly<Record<string, PromptBuilder>>;
  /** Reads the thread's attachments (src/thread/run/prompt-attachments.ts); none can be read when absent. */
  attachments?: AttachmentBytes;
}

/**
 * Rebuilds model call `step` of run `runId` (its last by default). The first call's input is the branch up to its
 * user message read back exactly as a turn reads it (newest first, to the budget), the context version it ran under
 * (its variables, and its tool policy for the tools listed: docs/tools.md#tool-policy), the artifact it ran on, and
 * the prompt builder it recorded. A later call's is that, plus the tool calls and answers of each earlier step, from
 * the reply entry (or, while the run waits for a person, the steps it waits with), put together by the turn loop's own
 * `toolRoundMessages`. Never a stored copy of the prompt.
 */
export async function rebuildRunInput(
  storage: DurableObjectStorage,
  versions: VersionBindings,
  runId: string,
  options: RebuildOptions = {},
): Promise<Result<RunInputView>> {
  const builders = options.builders ?? PROMPT_BUILDERS;
  const run = findRun(storage, runId);
  if (run === null) return fail("not_found", "Run not found.");
  const audit = readRunAudit(storage, runId);
  if (audit === null || audit.inputDigest === null || run.userEntryId === null) return noInput();
  const step = options.step ?? audit.steps.length - 1;
  const recorded = audit.steps[step];
  if (recorded === undefined) {
    return fail(
      "not_found",
      `This run made ${audit.steps.length} model call(s): step ${step} is not one of them (0 to ${audit.steps.length - 1}).`,
    );
  }
  if (recorded.inputDigest === null) {
    return fail(
      "not_found",
      `The input digest of step ${step} was not recorded: its input cannot be verified.`,
    );
  }
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
  // The attachments' bytes are read back from object storage, as the run read them (docs/api.md#attachments).
  const messages = build(
    await withAttachmentBytes(
      {
        instructions: expandContext(ran.artifact.instructions, context.variables),
        branch: history,
        maxContextTokens: budget,
      },
      options.attachments,
    ),
  );
  const rounds = step === 0 ? ok([]) : earlierRounds(storage, entries, run, step);
  if (!rounds.ok) return rounds;
  const input: ModelInput = modelInputOf(
    ran.artifact.model,
    [...messages, ...rounds.value],
    modelTools(ran.artifact, context.toolPolicy),
  );
  const digest = await inputDigest(input);
  return ok({
    runId,
    inputDigest: recorded.inputDigest,
    promptBuilder: audit.promptBuilder,
    artifactDigest: audit.artifactDigest,
    agentVersion: ran.version,
    contextVersion: audit.contextVersion,
    userEntryId: userEntry.id,
    ...input,
    verified: digest === recorded.inputDigest,
    step,
    steps: audit.steps,
  });
}

/**
 * The messages steps 0..`step`-1 added to the turn's prompt: for each, the text it wrote and its tool calls, then
 * their answers, read from the run's reply entry (`body.toolCalls`, docs/storage.md), where they are stored once the
 * run ends, or, while it waits for a person, from the steps it waits with.
 */
function earlierRounds(
  storage: DurableObjectStorage,
  entries: EntryStore,
  run: Run,
  step: number,
): Result<LanguageModelV4Message[]> {
  if (run.status === "queued" || run.status === "running") {
    return fail(
      "conflict",
      `This run is still going: its tool calls are stored when it ends, so step ${step} can be rebuilt then (step 0 can be now).`,
    );
  }
  const stored =
    run.status === "requires_action" ? waitingCalls(storage, run) : replyCalls(entries, run, step);
  if (!stored.ok) return stored;
  const { text, calls } = stored.value;
  const out: LanguageModelV4Message[] = [];
  let from = 0;
  for (let earlier = 0; earlier < step; earlier++) {
    const round = calls.filter((call) => call.step === earlier);
    const first = round[0];
    if (first === undefined) {
      return fail("not_found", `The tool calls of step ${earlier} of this run are no longer stored.`);
    }
    // The stretch of text written during that step, exactly as the reply's history is cut (tool-history.ts).
    const to = Math.max(from, Math.min(first.textOffset, text.length));
    out.push(
      ...toolRoundMessages(
        text.slice(from, to),
        round.map((call) => ({
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
          outcome: { output: call.output, ...(call.isError ? { isError: true } : {}) },
        })),
      ),
    );
    from = to;
  }
  return ok(out);
}

interface StoredRounds {
  text: string;
  calls: StoredToolCall[];
}

/** A waiting run's text and answered calls, from the steps it waits with (stored as the reply will store them). */
function waitingCalls(storage: DurableObjectStorage, run: Run): Result<StoredRounds> {
  const parked = new ActionStore(storage, { now: Date.now }).parked(run.id);
  if (!Array.isArray(parked)) return fail("not_found", "The steps this run waits with are no longer stored.");
  const steps = parked as unknown as TurnStep[];
  const text = steps.map((s) => s.text).join("");
  return ok({ text, calls: toolCallsOfSteps(steps, text) });
}

/** An ended run's text and tool calls, from its reply entry. */
function replyCalls(entries: EntryStore, run: Run, step: number): Result<StoredRounds> {
  const reply = run.assistantEntryId === null ? null : entries.get(run.assistantEntryId);
  const body = reply?.body;
  const text =
    typeof body === "object" && body !== null && "text" in body && typeof body.text === "string"
      ? body.text
      : null;
  if (text === null) {
    return fail(
      "not_found",
      `This run's reply is not stored (it wrote no text), so the tool calls before step ${step} cannot be rebuilt.`,
    );
  }
  return ok({ text, calls: storedToolCalls(body) });
}
