// Prompt builders are versioned: the current one is registered under its id, and an old id keeps its builder.
import { describe, expect, it } from "vitest";
import { type BuildPromptInput, buildPrompt } from "../../src/models/prompt";
import {
  CURRENT_PROMPT_BUILDER,
  currentPromptBuilder,
  PROMPT_BUILDERS,
  type PromptBuilder,
  promptBuilder,
} from "../../src/models/prompt-builders";

const INPUT: BuildPromptInput = {
  instructions: "Be brief.",
  branch: [
    { role: "user", text: "Hi" },
    { role: "assistant", text: "Hello." },
    { role: "user", text: "Bye" },
  ],
  maxContextTokens: 1000,
};

/** A test-only newer builder that builds differently (no system message): what a later change might do. */
const buildPromptV2: PromptBuilder = (input) => buildPrompt(input).filter((m) => m.role !== "system");

describe("prompt builder registry", () => {
  it("holds the builder new runs use under the id they record, and pb1 is the original buildPrompt", () => {
    expect(PROMPT_BUILDERS[CURRENT_PROMPT_BUILDER]).toBe(currentPromptBuilder);
    expect(promptBuilder("pb1")).toBe(buildPrompt);
    expect(Object.isFrozen(PROMPT_BUILDERS)).toBe(true);
  });

  it("still builds a pb1 input the pb1 way after a newer builder is registered", () => {
    const registry = { ...PROMPT_BUILDERS, pb2: buildPromptV2 };
    const v1 = promptBuilder("pb1", registry)?.(INPUT);
    const v2 = promptBuilder("pb2", registry)?.(INPUT);
    expect(v1).toEqual(buildPrompt(INPUT));
    expect(v1?.[0]).toEqual({ role: "system", content: "Be brief." });
    expect(v2?.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  it("knows no builder by an id it never registered (nor by an inherited name)", () => {
    expect(promptBuilder("pb0")).toBeNull();
    expect(promptBuilder("toString")).toBeNull();
  });
});
