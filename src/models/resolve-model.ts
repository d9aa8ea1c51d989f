// Turns an artifact's model config into a `LanguageModelV4`: the local model or a provider adapter with its secret.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { createWorkersAI } from "workers-ai-provider";
import type { ModelConfig } from "../control/artifact";
import { localHttpAllowed, modelUrlProblem } from "../control/url-policy";
import { fail, ok, type Result } from "../errors";
import { createLocalModel } from "./local-model";
import { configParameters } from "./model-input";

export interface ResolveModelDeps {
  env: Env;
  /** Decrypted value of a tenant secret by alias, or null when the tenant has none by that name. */
  tenantSecret: (alias: string) => Promise<string | null>;
  /** Outbound fetch for HTTP providers (tests pass a fake); the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Workers AI binding; falls back to an `AI` binding on `env` when one is configured. */
  ai?: Ai;
  /** This platform's own hosts: a model endpoint there is refused. */
  platformHosts?: readonly string[];
}

const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com/v1";

function isAiBinding(value: unknown): value is Ai {
  return typeof value === "object" && value !== null && "run" in value && typeof value.run === "function";
}

/** The config's sampling settings become per-call defaults, so a caller cannot forget them. */
function withDefaults(model: LanguageModelV4, config: ModelConfig): LanguageModelV4 {
  const defaults = configParameters(config);
  if (Object.keys(defaults).length === 0) return model;
  return {
    specificationVersion: "v4",
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: (options) => model.doGenerate({ ...defaults, ...options }),
    doStream: (options) => model.doStream({ ...defaults, ...options }),
  };
}

async function apiKey(
  config: ModelConfig,
  deps: ResolveModelDeps,
  required: boolean,
): Promise<Result<string | undefined>> {
  if (config.apiKeySecret === undefined) {
    return required
      ? fail("bad_request", `The ${config.provider} provider needs apiKeySecret naming a tenant secret.`)
      : ok(undefined);
  }
  const value = await deps.tenantSecret(config.apiKeySecret);
  if (value === null || value === "") {
    return fail(
      "bad_request",
      `The secret "${config.apiKeySecret}" named by the model's apiKeySecret is not set.`,
    );
  }
  return ok(value);
}

/**
 * Judged again before every call, under this deployment's environment and hosts: an API key never travels in clear
 * text, and no model endpoint is private, loopback, metadata or this platform (plain local http only in
 * development). A refusal makes no request.
 */
function checkBaseUrl(baseUrl: string | undefined, deps: ResolveModelDeps): Result<string | undefined> {
  if (baseUrl === undefined) return ok(undefined);
  const problem = modelUrlProblem(baseUrl, {
    platformHosts: deps.platformHosts ?? [],
    allowLocalHttp: localHttpAllowed(deps.env.ENVIRONMENT),
  });
  if (problem !== null) return fail("bad_request", `The model's baseUrl ${problem}.`);
  return ok(new URL(baseUrl).toString().replace(/\/+$/, ""));
}

export async function resolveModel(
  config: ModelConfig,
  deps: ResolveModelDeps,
): Promise<Result<LanguageModelV4>> {
  switch (config.provider) {
    case "local":
      return ok(withDefaults(createLocalModel(config.model, config.local), config));

    case "openai-compatible": {
      const baseUrl = checkBaseUrl(config.baseUrl, deps);
      if (!baseUrl.ok) return baseUrl;
      if (baseUrl.value === undefined)
        return fail("bad_request", "The openai-compatible provider needs a baseUrl.");
      const key = await apiKey(config, deps, false);
      if (!key.ok) return key;
      const provider = createOpenAICompatible({
        name: "openai-compatible",
        baseURL: baseUrl.value,
        includeUsage: true,
        ...(key.value !== undefined ? { apiKey: key.value } : {}),
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
      });
      return ok(withDefaults(provider.chatModel(config.model), config));
    }

    case "anthropic": {
      const baseUrl = checkBaseUrl(config.baseUrl, deps);
      if (!baseUrl.ok) return baseUrl;
      const key = await apiKey(config, deps, true);
      if (!key.ok) return key;
      // baseURL and apiKey are always explicit so nothing is read from process.env.
      const provider = createAnthropic({
        baseURL: baseUrl.value ?? ANTHROPIC_DEFAULT_BASE_URL,
        ...(key.value !== undefined ? { apiKey: key.value } : {}),
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
      });
      return ok(withDefaults(provider.languageModel(config.model), config));
    }

    case "workers-ai": {
      const binding = deps.ai ?? Reflect.get(deps.env, "AI");
      if (!isAiBinding(binding)) {
        return {
          ...fail("upstream_unavailable", "Workers AI is not available in this deployment."),
          reason: "not_found",
        };
      }
      try {
        return ok(withDefaults(createWorkersAI({ binding })(config.model), config));
      } catch {
        // The provider refuses some model id shapes (gateway features it was not configured for) when building.
        return fail("bad_request", "The Workers AI model id is not supported.");
      }
    }
  }
}
