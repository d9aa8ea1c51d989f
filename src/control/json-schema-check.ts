// Whether a value an artifact offers as a JSON Schema is one, so a tool's `outputSchema` fails at publish, not at a call.
import { type OutputUnit, type Schema, Validator } from "@cfworker/json-schema";

/**
 * The shape every JSON Schema keyword must have: draft-07's meta-schema, which recurses by plain `$ref` (the validator
 * does not follow draft 2020-12's `$dynamicRef` through its vocabularies), plus the 2020-12 keywords that hold
 * schemas (`$defs`, `prefixItems`, `dependentSchemas`) and `dependentRequired`. Unknown keywords stay allowed.
 */
const META_SCHEMA: Schema = {
  $id: "https://agent-threads.dev/meta/json-schema",
  definitions: {
    schemaArray: { type: "array", minItems: 1, items: { $ref: "#" } },
    nonNegativeInteger: { type: "integer", minimum: 0 },
    nonNegativeIntegerDefault0: { $ref: "#/definitions/nonNegativeInteger" },
    simpleTypes: { enum: ["array", "boolean", "integer", "null", "number", "object", "string"] },
    stringArray: { type: "array", items: { type: "string" }, uniqueItems: true },
    schemaMap: { type: "object", additionalProperties: { $ref: "#" } },
  },
  type: ["object", "boolean"],
  properties: {
    $id: { type: "string" },
    $schema: { type: "string" },
    $ref: { type: "string" },
    $comment: { type: "string" },
    $anchor: { type: "string" },
    $defs: { $ref: "#/definitions/schemaMap" },
    definitions: { $ref: "#/definitions/schemaMap" },
    title: { type: "string" },
    description: { type: "string" },
    readOnly: { type: "boolean" },
    writeOnly: { type: "boolean" },
    deprecated: { type: "boolean" },
    examples: { type: "array" },
    multipleOf: { type: "number", exclusiveMinimum: 0 },
    maximum: { type: "number" },
    exclusiveMaximum: { type: "number" },
    minimum: { type: "number" },
    exclusiveMinimum: { type: "number" },
    maxLength: { $ref: "#/definitions/nonNegativeInteger" },
    minLength: { $ref: "#/definitions/nonNegativeIntegerDefault0" },
    pattern: { type: "string" },
    additionalItems: { $ref: "#" },
    items: { anyOf: [{ $ref: "#" }, { $ref: "#/definitions/schemaArray" }] },
    prefixItems: { $ref: "#/definitions/schemaArray" },
    maxItems: { $ref: "#/definitions/nonNegativeInteger" },
    minItems: { $ref: "#/definitions/nonNegativeIntegerDefault0" },
    uniqueItems: { type: "boolean" },
    contains: { $ref: "#" },
    maxContains: { $ref: "#/definitions/nonNegativeInteger" },
    minContains: { $ref: "#/definitions/nonNegativeInteger" },
    maxProperties: { $ref: "#/definitions/nonNegativeInteger" },
    minProperties: { $ref: "#/definitions/nonNegativeIntegerDefault0" },
    required: { $ref: "#/definitions/stringArray" },
    additionalProperties: { $ref: "#" },
    properties: { $ref: "#/definitions/schemaMap" },
    patternProperties: { $ref: "#/definitions/schemaMap" },
    dependentSchemas: { $ref: "#/definitions/schemaMap" },
    dependentRequired: { type: "object", additionalProperties: { $ref: "#/definitions/stringArray" } },
    dependencies: {
      type: "object",
      additionalProperties: { anyOf: [{ $ref: "#" }, { $ref: "#/definitions/stringArray" }] },
    },
    propertyNames: { $ref: "#" },
    unevaluatedItems: { $ref: "#" },
    unevaluatedProperties: { $ref: "#" },
    enum: { type: "array" },
    type: {
      anyOf: [
        { $ref: "#/definitions/simpleTypes" },
        { type: "array", items: { $ref: "#/definitions/simpleTypes" }, minItems: 1, uniqueItems: true },
      ],
    },
    format: { type: "string" },
    contentMediaType: { type: "string" },
    contentEncoding: { type: "string" },
    if: { $ref: "#" },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword, in data never awaited.
    then: { $ref: "#" },
    else: { $ref: "#" },
    allOf: { $ref: "#/definitions/schemaArray" },
    anyOf: { $ref: "#/definitions/schemaArray" },
    oneOf: { $ref: "#/definitions/schemaArray" },
    not: { $ref: "#" },
  },
};

let metaValidator: Validator | undefined;

export interface SchemaIssue {
  /** Where in the schema, as `.properties.amount.type` (empty for the schema itself), to append to a field path. */
  path: string;
  message: string;
}

/** Keywords that only report that something below them failed: the failure below is the one to name. */
const AGGREGATES = new Set(["properties", "items", "additionalProperties", "$ref", "anyOf", "allOf"]);

/** A JSON pointer fragment (`#/properties/a`) as dot-joined segments (`.properties.a`). */
export function pointerToPath(instanceLocation: string): string {
  return instanceLocation
    .replace(/^#/, "")
    .split("/")
    .slice(1)
    .map((segment) => `.${decodeSegment(segment)}`)
    .join("");
}

/** The validator's errors reduced to one per place, without those that only say a part below failed. */
export function reduceErrors(errors: readonly OutputUnit[]): SchemaIssue[] {
  const byPath = new Map<string, string>();
  for (const error of errors) {
    if (AGGREGATES.has(error.keyword)) continue;
    const path = pointerToPath(error.instanceLocation);
    if (!byPath.has(path)) byPath.set(path, error.error);
  }
  if (byPath.size === 0 && errors[0] !== undefined) {
    byPath.set(pointerToPath(errors[0].instanceLocation), errors[0].error);
  }
  return [...byPath].map(([path, message]) => ({ path, message }));
}

/** Keywords whose value is a map of names to schemas: its keys are names, never keywords. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Keywords whose value is data, not schemas. */
const DATA = new Set(["enum", "const", "examples", "default"]);

/** Every `$ref` in a schema, with where it sits. */
function refsOf(node: unknown, path: string, out: { path: string; ref: unknown }[], names = false): void {
  if (Array.isArray(node)) {
    for (const [index, child] of node.entries()) refsOf(child, `${path}.${index}`, out);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  for (const [key, child] of Object.entries(node)) {
    if (names) refsOf(child, `${path}.${key}`, out);
    else if (key === "$ref") out.push({ path: `${path}.$ref`, ref: child });
    else if (!DATA.has(key)) refsOf(child, `${path}.${key}`, out, SCHEMA_MAPS.has(key));
  }
}

function decodeSegment(segment: string): string {
  let text = segment;
  try {
    text = decodeURIComponent(segment);
  } catch {
    // Not percent-encoded: taken as written.
  }
  return text.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Whether a local reference (`#`, `#/a/b`) names a place inside `schema`. */
function resolves(schema: unknown, ref: string): boolean {
  let node: unknown = schema;
  for (const segment of ref.replace(/^#/, "").split("/").slice(1).map(decodeSegment)) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, segment)) return false;
    node = (node as Record<string, unknown>)[segment];
  }
  return true;
}

/**
 * Why `schema` is not a JSON Schema this product can validate with, as `{path, message}`; empty when it is. Its
 * keywords must have their meta-schema shape, and every `$ref` must point inside it (no remote schema is fetched).
 */
export function jsonSchemaIssues(schema: unknown): SchemaIssue[] {
  metaValidator ??= new Validator(META_SCHEMA, "7", false);
  const result = metaValidator.validate(schema);
  if (!result.valid) {
    return reduceErrors(result.errors).map((issue) => ({
      path: issue.path,
      message: `not a valid JSON Schema: ${issue.message}`,
    }));
  }
  const refs: { path: string; ref: unknown }[] = [];
  refsOf(schema, "", refs);
  const issues: SchemaIssue[] = [];
  for (const { path, ref } of refs) {
    if (typeof ref !== "string" || !(ref === "#" || ref.startsWith("#/")) || !resolves(schema, ref)) {
      issues.push({ path, message: "must be a reference inside this schema, such as '#/$defs/name'" });
    }
  }
  if (issues.length > 0) return issues;
  try {
    new Validator(schema as Schema, "2020-12");
  } catch (error) {
    return [{ path: "", message: `not a valid JSON Schema: ${(error as Error).message}` }];
  }
  return [];
}
