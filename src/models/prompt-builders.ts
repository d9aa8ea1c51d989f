// Prompt builders by version: every run records the id of the one that built its input, so it rebuilds the same way.
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import { type BuildPromptInput, buildPrompt } from "./prompt";

export type PromptBuilder = (input: BuildPromptInput) => LanguageModelV4Prompt;

/**
 * Append only, and never change a registered builder: a stored run names its builder, and its audit rebuilds its
 * model input with that one (docs/storage.md, "Audit record"). A change to how prompts are built is a new id.
 * (pb1 learned attachments without a new id: a branch without any builds exactly as before, and no run recorded
 * before messages could carry attachments has one.)
 */
export const PROMPT_BUILDERS: Readonly<Record<string, PromptBuilder>> = Object.freeze({
  pb1: buildPrompt,
});

/** The builder new runs use, and its id (a test checks the registry holds it under that id). */
export const CURRENT_PROMPT_BUILDER = "pb1";
export const currentPromptBuilder: PromptBuilder = buildPrompt;

/** The builder registered as `id` in `builders`, or null for an id this build does not know. */
export function promptBuilder(
  id: string,
  builders: Readonly<Record<string, PromptBuilder>> = PROMPT_BUILDERS,
): PromptBuilder | null {
  return Object.hasOwn(builders, id) ? (builders[id] ?? null) : null;
}
