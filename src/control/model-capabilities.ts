// Which attachment media types each provider's model can be handed (docs/api.md#attachments), judged at publish.
import type { ModelConfig } from "./artifact";

/** Inlined as a text part for every provider, so every model takes it. */
const TEXT = ["text/plain"] as const;
const IMAGES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
const PDF = "application/pdf";

/**
 * Workers AI chat models that take `image_url` parts: workers-ai-provider hands them image file parts as data URLs
 * and refuses every other file part, so no Workers AI model takes a PDF.
 */
export const WORKERS_AI_VISION_MODELS: readonly string[] = [
  "@cf/meta/llama-3.2-11b-vision-instruct",
  "@cf/meta/llama-4-scout-17b-16e-instruct",
  "@cf/google/gemma-3-12b-it",
  "@cf/mistralai/mistral-small-3.1-24b-instruct",
];

/**
 * The attachment media types a model takes. `local` takes all of them (it only names them). Anthropic takes images
 * (`image` blocks) and PDF (`document` blocks). An OpenAI-compatible endpoint takes images (`image_url`) and PDF
 * (the Chat Completions `file` part with `file_data`, which is what the adapter sends). Workers AI takes images
 * only on its vision models. Text is inlined for all.
 */
export function acceptedMediaTypes(model: Pick<ModelConfig, "provider" | "model">): readonly string[] {
  switch (model.provider) {
    case "local":
    case "anthropic":
    case "openai-compatible":
      return [...TEXT, ...IMAGES, PDF];
    case "workers-ai":
      return WORKERS_AI_VISION_MODELS.includes(model.model) ? [...TEXT, ...IMAGES] : [...TEXT];
  }
}

/** The media types of `accept` the model cannot take, in `accept`'s order (empty when it takes them all). */
export function untakenMediaTypes(
  model: Pick<ModelConfig, "provider" | "model">,
  accept: readonly string[],
): string[] {
  const takes = acceptedMediaTypes(model);
  return accept.filter((type) => !takes.includes(type));
}

/** The publish issue (`attachments.accept`) naming the accepted types the model cannot take; none when it takes all. */
export function attachmentAcceptIssues(
  model: Pick<ModelConfig, "provider" | "model">,
  accept: readonly string[],
): { path: string; message: string }[] {
  const untaken = untakenMediaTypes(model, accept);
  if (untaken.length === 0) return [];
  return [
    {
      path: "attachments.accept",
      message: `the model ${model.provider}/${model.model} cannot take ${untaken.join(", ")}; accept only what it takes`,
    },
  ];
}
