// A run's model input as its audit record digests it: model, messages, tools and call parameters, exactly as sent.
import type { LanguageModelV4FunctionTool, LanguageModelV4Prompt } from "@ai-sdk/provider";
import type { ModelConfig } from "../control/artifact";
import { digestOf } from "../control/canonical-json";

/** The settings a model call passes beside the prompt (`toolChoice` only when it has tools). */
export interface ModelParameters {
  temperature?: number;
  maxOutputTokens?: number;
  toolChoice?: { type: "auto" };
}

/**
 * What one model call is handed: `model` is `<provider>/<model id>` as the artifact names it, `messages` the
 * prompt, `tools` the function tools after identity hiding (empty when none), `parameters` the call's settings.
 */
export interface ModelInput {
  model: string;
  messages: LanguageModelV4Prompt;
  tools: LanguageModelV4FunctionTool[];
  parameters: ModelParameters;
}

/** The sampling settings of a model config: what `resolveModel` makes the defaults of every call. */
export function configParameters(config: ModelConfig): Omit<ModelParameters, "toolChoice"> {
  return {
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    ...(config.maxOutputTokens !== undefined ? { maxOutputTokens: config.maxOutputTokens } : {}),
  };
}

/** The input of a model call of a turn (every call `runTurn` makes: tools with `toolChoice: auto` when any). */
export function modelInputOf(
  config: ModelConfig,
  messages: LanguageModelV4Prompt,
  tools: readonly LanguageModelV4FunctionTool[] | undefined,
): ModelInput {
  const list = [...(tools ?? [])];
  return {
    model: `${config.provider}/${config.model}`,
    messages,
    tools: list,
    parameters: { ...configParameters(config), ...(list.length > 0 ? { toolChoice: { type: "auto" } } : {}) },
  };
}

/** `sha256:<hex>` of the input's canonical JSON (docs/api.md's canonical form: sorted keys, no undefined). */
export function inputDigest(input: ModelInput): Promise<string> {
  return digestOf(input);
}
