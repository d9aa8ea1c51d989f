// Whether a client tool's answer may reach the model: its size and the tool's outputSchema (docs/tools.md#client-tools).
import { Validator } from "@cfworker/json-schema";
import { MAX_TOOL_RESULT_BYTES } from "../shared/protocol";
import type { ArtifactTool as Tool } from "./artifact";
import type { FieldIssue } from "./field-issues";
import { reduceErrors } from "./json-schema-check";

/** One validator per output schema object (the artifact is parsed once per version and kept). */
const validators = new WeakMap<object, Validator>();

function validatorFor(schema: Record<string, unknown>): Validator {
  let validator = validators.get(schema);
  if (validator === undefined) {
    validator = new Validator(schema, "2020-12", false);
    validators.set(schema, validator);
  }
  return validator;
}

/**
 * Why `output` may not be the tool's result, as field issues under `output` (the `tool_result` field); empty when it
 * may. Over 64 KiB as JSON text is one issue and nothing else is checked; otherwise every place the tool's
 * `outputSchema` refuses.
 */
export function checkToolOutput(tool: Tool, output: unknown): FieldIssue[] {
  const text = JSON.stringify(output) ?? "";
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_TOOL_RESULT_BYTES) {
    return [
      { path: "output", message: `must be at most ${MAX_TOOL_RESULT_BYTES} bytes as JSON (is ${bytes})` },
    ];
  }
  if (tool.outputSchema === undefined) return [];
  let result: ReturnType<Validator["validate"]>;
  try {
    result = validatorFor(tool.outputSchema).validate(output);
  } catch {
    // Checked at publish (src/control/json-schema-check.ts), so only a schema this validator cannot follow.
    return [{ path: "output", message: "the tool's outputSchema could not be applied" }];
  }
  if (result.valid) return [];
  return reduceErrors(result.errors).map((issue) => ({
    path: `output${issue.path}`,
    message: issue.message,
  }));
}
