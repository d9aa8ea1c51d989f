// An artifact's tools as the model sees them: name, description and input schema, minus the identity the runtime fills.
import type { JSONSchema7, LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import { z } from "zod";
import type { toolSchema } from "../control/artifact";

export type Tool = z.infer<typeof toolSchema>;

export type IdentityField = "tenantId" | "agentId" | "threadId" | "subject";

/**
 * Input keys that name who is calling. The runtime sets them from verified claims; the model is never asked for
 * them and never gets to choose them. Keys are compared lower-cased without `_` and `-`.
 */
const IDENTITY_KEYS = new Map<string, IdentityField>([
  ["tenantid", "tenantId"],
  ["agentid", "agentId"],
  ["threadid", "threadId"],
  ["sessionid", "threadId"],
  ["userid", "subject"],
  ["subject", "subject"],
]);

/** Which runtime identity an input key stands for, or `null` for an ordinary argument. */
export function identityKind(key: string): IdentityField | null {
  return IDENTITY_KEYS.get(key.toLowerCase().replace(/[_-]/g, "")) ?? null;
}

const objectSchema = z.custom<JSONSchema7>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  "must be a JSON object",
);

/** The tool's input schema without identity properties (the runtime injects those). */
function modelInputSchema(inputSchema: Tool["inputSchema"]): JSONSchema7 {
  if (inputSchema === undefined) return { type: "object", properties: {} };
  const schema = objectSchema.parse({ type: "object", ...inputSchema });
  const properties = objectSchema.safeParse(schema.properties);
  if (!properties.success) return schema;
  const visible = Object.fromEntries(
    Object.entries(properties.data).filter(([key]) => identityKind(key) === null),
  );
  const required = Array.isArray(schema.required)
    ? schema.required.filter((key: unknown) => typeof key === "string" && identityKind(key) === null)
    : undefined;
  return objectSchema.parse({ ...schema, properties: visible, ...(required ? { required } : {}) });
}

/** The function tools handed to `runTurn` (and so to the model) for an artifact's tools. */
export function toolDefinitions(tools: readonly Tool[] | undefined): LanguageModelV4FunctionTool[] {
  return (tools ?? []).map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: modelInputSchema(tool.inputSchema),
  }));
}

/** The artifact tool a model's call names, or `null` (the model asked for a tool the agent does not have). */
export function toolNamed(tools: readonly Tool[] | undefined, name: string): Tool | null {
  return (tools ?? []).find((tool) => tool.name === name) ?? null;
}
