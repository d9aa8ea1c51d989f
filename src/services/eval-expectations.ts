// An eval case's expectations judged over what its thread did (docs/evals.md#expectations); the judge is elsewhere.
import { Validator } from "@cfworker/json-schema";
import { canonicalJson, sha256Hex } from "../control/canonical-json";
import type { Expectation, ExpectationFailure } from "../shared/evals-api";
import { boundedTest } from "./eval-regex";

/** What a case's thread did, as its result shows it. */
export interface CaseTranscript {
  messages: { role: string; text: string }[];
  toolCalls: { name: string; input: unknown; output: unknown }[];
}

const SEEN_CHARS = 500;
const cut = (text: string) => (text.length > SEEN_CHARS ? `${text.slice(0, SEEN_CHARS)}…` : text);

/** The text the expectations read: the last assistant message of the branch. */
export function replyOf(transcript: CaseTranscript): string {
  for (let i = transcript.messages.length - 1; i >= 0; i--) {
    const message = transcript.messages[i];
    if (message?.role === "assistant") return message.text;
  }
  return "";
}

function includes(text: string, needle: string, caseSensitive: boolean | undefined): boolean {
  return caseSensitive === false ? text.toLowerCase().includes(needle.toLowerCase()) : text.includes(needle);
}

function schemaMismatch(schema: unknown, value: unknown): string | null {
  const validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], "2020-12", false);
  const result = validator.validate(value);
  if (result.valid) return null;
  const first = result.errors[result.errors.length - 1];
  return first === undefined ? "does not match" : `${first.instanceLocation}: ${first.error}`;
}

/**
 * The failure of one expectation, or null when it holds. `judge` is not decided here (it needs a model call): it
 * answers null and the caller asks the judge.
 */
export function checkExpectation(
  expectation: Expectation,
  index: number,
  transcript: CaseTranscript,
): ExpectationFailure | null {
  const reply = replyOf(transcript);
  const called = transcript.toolCalls.map((c) => c.name);
  const failure = (message: string, seen: unknown): ExpectationFailure => ({
    index,
    type: expectation.type,
    message,
    seen: seen as ExpectationFailure["seen"],
  });
  switch (expectation.type) {
    case "contains":
      return includes(reply, expectation.text, expectation.caseSensitive)
        ? null
        : failure(`The reply does not contain "${expectation.text}".`, cut(reply));
    case "not_contains":
      return includes(reply, expectation.text, expectation.caseSensitive)
        ? failure(`The reply contains "${expectation.text}".`, cut(reply))
        : null;
    case "regex":
      return boundedTest(expectation.pattern, expectation.flags, reply)
        ? null
        : failure(`The reply does not match /${expectation.pattern}/${expectation.flags ?? ""}.`, cut(reply));
    case "tool_called": {
      const calls = transcript.toolCalls.filter((c) => c.name === expectation.tool);
      if (calls.length === 0) return failure(`The tool "${expectation.tool}" was not called.`, called);
      if (expectation.input === undefined) return null;
      const problems = calls.map((c) => schemaMismatch(expectation.input, c.input));
      if (problems.some((p) => p === null)) return null;
      return failure(
        `No call of "${expectation.tool}" had input matching the schema (${problems[0]}).`,
        calls.map((c) => c.input),
      );
    }
    case "tool_not_called":
      return called.includes(expectation.tool)
        ? failure(`The tool "${expectation.tool}" was called.`, called)
        : null;
    case "json_schema": {
      let value: unknown;
      try {
        value = JSON.parse(reply);
      } catch {
        return failure("The reply is not JSON.", cut(reply));
      }
      const problem = schemaMismatch(expectation.schema, value);
      return problem === null
        ? null
        : failure(`The reply does not match the schema (${problem}).`, cut(reply));
    }
    case "judge":
      return null;
  }
}

/**
 * SHA-256 over the canonical JSON of the transcript: its messages (role, text) and tool calls (name, input, output),
 * no ids or times, so the same artifact digest on the deterministic `local` model hashes the same every run.
 */
export function transcriptSha256(transcript: CaseTranscript): Promise<string> {
  return sha256Hex(canonicalJson(transcript));
}
