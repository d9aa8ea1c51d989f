// The `judge` expectation (docs/evals.md#judge): a model named in the case reads the transcript and a rubric and
// answers a score from 0 to 1 with its reasoning; the case passes when the score reaches the threshold.
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { decryptTenantSecret } from "../auth/secret-box";
import { modelSchema } from "../control/artifact";
import { platformHosts } from "../control/url-policy";
import { resolveModel } from "../models/resolve-model";
import type { Expectation, JudgeVerdict } from "../shared/evals-api";
import type { CaseTranscript } from "./eval-expectations";

type JudgeExpectation = Extract<Expectation, { type: "judge" }>;

const MAX_REASONING_CHARS = 2000;

const JUDGE_INSTRUCTIONS = [
  "You grade one conversation between a user and an AI agent against a rubric.",
  'Answer with one JSON object and nothing else: {"score": <number from 0 to 1>, "reasoning": "<why, briefly>"}.',
].join("\n");

function judgePrompt(rubric: string, transcript: CaseTranscript): string {
  const lines = transcript.messages.map((m) => `${m.role}: ${m.text}`);
  const tools = transcript.toolCalls.map(
    (c) => `tool ${c.name}(${JSON.stringify(c.input)}) -> ${JSON.stringify(c.output)}`,
  );
  return `Rubric:\n${rubric}\n\nConversation:\n${[...lines, ...tools].join("\n")}`;
}

/** The first JSON object in the model's text with a numeric `score`; null when there is none. */
export function parseVerdict(text: string): { score: number; reasoning: string } | null {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end <= start) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const score = (value as { score?: unknown }).score;
  const reasoning = (value as { reasoning?: unknown }).reasoning;
  if (typeof score !== "number" || !Number.isFinite(score)) return null;
  return {
    score: Math.min(1, Math.max(0, score)),
    reasoning: typeof reasoning === "string" ? reasoning : "",
  };
}

/** Streams the judge's answer (every provider adapter streams; not all answer a non-streaming call the same way). */
async function generate(
  model: LanguageModelV4,
  prompt: string,
): Promise<{ text: string; input: number; output: number }> {
  const { stream } = await model.doStream({
    prompt: [
      { role: "system", content: JUDGE_INSTRUCTIONS },
      { role: "user", content: [{ type: "text", text: prompt }] },
    ],
  });
  let text = "";
  let input = 0;
  let output = 0;
  for await (const part of stream) {
    if (part.type === "text-delta") text += part.delta;
    else if (part.type === "error")
      throw part.error instanceof Error ? part.error : new Error(String(part.error));
    else if (part.type === "finish") {
      input = part.usage.inputTokens.total ?? 0;
      output = part.usage.outputTokens.total ?? 0;
    }
  }
  return { text, input, output };
}

/** The judge's verdict on one case; a model that cannot be reached or answers no verdict fails the expectation. */
export async function judgeCase(
  env: Env,
  tenantId: string,
  expectation: JudgeExpectation,
  index: number,
  transcript: CaseTranscript,
): Promise<{ verdict: JudgeVerdict; tokens: { input: number; output: number } }> {
  const none = { input: 0, output: 0 };
  const fail = (reasoning: string) => ({
    verdict: { index, score: null, passed: false, reasoning },
    tokens: none,
  });
  const config = modelSchema.safeParse(expectation.model);
  if (!config.success) return fail("The judge's model is not a valid model config.");
  const model = await resolveModel(config.data, {
    env,
    tenantSecret: (alias) => decryptTenantSecret(env, tenantId, alias).catch(() => null),
    platformHosts: platformHosts(env),
  });
  if (!model.ok) return fail(`The judge's model is unavailable: ${model.message}`);
  let answer: Awaited<ReturnType<typeof generate>>;
  try {
    answer = await generate(model.value, judgePrompt(expectation.rubric, transcript));
  } catch (error) {
    return fail(`The judge's model failed: ${(error as Error).message}`);
  }
  const tokens = { input: answer.input, output: answer.output };
  const parsed = parseVerdict(answer.text);
  if (parsed === null) {
    return {
      verdict: {
        index,
        score: null,
        passed: false,
        reasoning: `No verdict in the judge's answer: ${answer.text.slice(0, 300)}`,
      },
      tokens,
    };
  }
  return {
    verdict: {
      index,
      score: parsed.score,
      passed: parsed.score >= expectation.threshold,
      reasoning: parsed.reasoning.slice(0, MAX_REASONING_CHARS),
    },
    tokens,
  };
}
