// An artifact's tools as the model sees them: name, description and input schema, minus the identity the runtime fills.
import type { JSONSchema7, LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import { z } from "zod";
import type { toolSchema } from "../control/artifact";
import { type IdentityFact, identityKind, parsePointer } from "../control/tool-identity";

export type Tool = z.infer<typeof toolSchema>;

/** One place in a tool's input the runtime writes an identity fact to. */
export interface IdentitySlot {
  /** Property names from the input's root. */
  path: readonly string[];
  fact: IdentityFact;
}

const objectSchema = z.custom<JSONSchema7>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  "must be a JSON object",
);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Every place the runtime writes identity for this tool: the top-level identity-like keys its schema declares (the
 * behaviour of tools without `identity`), then its declared pointers, which win where both name a key. Pointers were
 * checked when the version was published, so one that does not parse is skipped rather than trusted.
 */
export function identitySlots(tool: Tool): IdentitySlot[] {
  const declared: IdentitySlot[] = [];
  for (const [pointer, fact] of Object.entries(tool.identity ?? {})) {
    const path = parsePointer(pointer);
    if (path !== null) declared.push({ path, fact });
  }
  const named = new Set(declared.filter((slot) => slot.path.length === 1).map((slot) => slot.path[0]));
  const properties = tool.inputSchema?.properties;
  const implied: IdentitySlot[] = [];
  if (isObject(properties)) {
    for (const key of Object.keys(properties)) {
      const fact = identityKind(key);
      if (fact !== null && !named.has(key)) implied.push({ path: [key], fact });
    }
  }
  return [...implied, ...declared];
}

/** `schema` without the property at `path` (walking `properties`), also dropped from that level's `required`. */
function withoutProperty(schema: JSONSchema7, path: readonly string[]): JSONSchema7 {
  const [head, ...rest] = path;
  const properties = schema.properties;
  if (head === undefined || !isObject(properties) || !Object.hasOwn(properties, head)) return schema;
  if (rest.length === 0) {
    const visible = Object.fromEntries(Object.entries(properties).filter(([key]) => key !== head));
    const required = Array.isArray(schema.required)
      ? schema.required.filter((key: unknown) => key !== head)
      : undefined;
    return objectSchema.parse({ ...schema, properties: visible, ...(required ? { required } : {}) });
  }
  const child = objectSchema.safeParse(properties[head]);
  if (!child.success) return schema;
  // A computed key defines an own property, so a `__proto__` property name stays a plain key.
  return objectSchema.parse({
    ...schema,
    properties: { ...properties, [head]: withoutProperty(child.data, rest) },
  });
}

/**
 * The tool's input schema without identity properties (the runtime injects those): every top-level identity-like
 * key, and every declared pointer's property at any depth.
 */
function modelInputSchema(tool: Tool): JSONSchema7 {
  if (tool.inputSchema === undefined) return { type: "object", properties: {} };
  let schema = objectSchema.parse({ type: "object", ...tool.inputSchema });
  const properties = objectSchema.safeParse(schema.properties);
  if (properties.success) {
    const visible = Object.fromEntries(
      Object.entries(properties.data).filter(([key]) => identityKind(key) === null),
    );
    const required = Array.isArray(schema.required)
      ? schema.required.filter((key: unknown) => typeof key === "string" && identityKind(key) === null)
      : undefined;
    schema = objectSchema.parse({ ...schema, properties: visible, ...(required ? { required } : {}) });
  }
  for (const slot of identitySlots(tool)) schema = withoutProperty(schema, slot.path);
  return schema;
}

/** The function tools handed to `runTurn` (and so to the model) for an artifact's tools. */
export function toolDefinitions(tools: readonly Tool[] | undefined): LanguageModelV4FunctionTool[] {
  return (tools ?? []).map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: modelInputSchema(tool),
  }));
}

/** The artifact tool a model's call names, or `null` (the model asked for a tool the agent does not have). */
export function toolNamed(tools: readonly Tool[] | undefined, name: string): Tool | null {
  return (tools ?? []).find((tool) => tool.name === name) ?? null;
}
