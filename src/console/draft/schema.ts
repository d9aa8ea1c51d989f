// Live validation of a draft against the artifact's JSON Schema as the server publishes it
// (`GET /v1/schemas/artifact.json`), so the editor and the API can never disagree on a field's shape. The
// validator interprets the schema (no generated code, so it runs under the console's CSP); its raw errors are
// reduced to one sentence per failing field, keyed by the path the API's 400 details use.
import { type OutputUnit, type Schema, Validator } from "@cfworker/json-schema";
import { fromPointer, getAt, pathKey } from "./json-path";

export interface Issue {
  /** `model.provider`, `tools.0.name`, `(root)`: the API's spelling. */
  path: string;
  message: string;
  /** Where the issue came from: this browser's check, or the server's answer to a save or publish. */
  source: "schema" | "server";
}

export type ArtifactCheck = (value: unknown) => Issue[];

/** Keywords that only report that something below them failed: the failure below is the one to show. */
const AGGREGATES = new Set([
  "properties",
  "items",
  "prefixItems",
  "additionalProperties",
  "patternProperties",
  "unevaluatedProperties",
  "allOf",
  "$ref",
]);

/** What the schema's patterns mean, in the words the server's own checks use (src/control/artifact.ts). */
const PATTERNS: Record<string, string> = {
  "^#[0-9a-fA-F]{6}$": "must be a colour as #rrggbb",
  "^[a-z0-9][a-z0-9_-]{0,63}$": "must be a secret alias: lowercase letters, digits, '-' or '_'",
  "^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$": "must be a BCP 47 language tag such as 'es' or 'pt-BR'",
  "^[a-zA-Z][a-zA-Z0-9_-]{0,63}$": "must start with a letter, then letters, digits, '-' or '_' (at most 64)",
};

const TYPE_NAMES: Record<string, string> = {
  integer: "a whole number",
  number: "a number",
  string: "text",
  boolean: "true or false",
  object: "an object",
  array: "a list",
};

function schemaAt(schema: Schema, keywordLocation: string): Schema | undefined {
  const node = getAt(schema, fromPointer(keywordLocation).slice(0, -1));
  return typeof node === "object" && node !== null ? (node as Schema) : undefined;
}

function sentence(unit: OutputUnit, node: Schema | undefined): string {
  const n = node ?? {};
  switch (unit.keyword) {
    case "type": {
      const types = ([] as string[]).concat(n.type ?? []);
      return `must be ${types.map((t) => TYPE_NAMES[t] ?? t).join(" or ")}`;
    }
    case "const":
      return `must be ${JSON.stringify(n.const)}`;
    case "enum":
      return `must be one of: ${(n.enum ?? []).map((v: unknown) => String(v)).join(", ")}`;
    case "minLength":
      return n.minLength === 1 ? "must not be empty" : `must be at least ${n.minLength} characters`;
    case "maxLength":
      return `must be at most ${n.maxLength} characters`;
    case "minimum":
      return `must be at least ${n.minimum}`;
    case "maximum":
      return `must be at most ${n.maximum}`;
    case "minItems":
      return `must have at least ${n.minItems} items`;
    case "maxItems":
      return `must have at most ${n.maxItems} items`;
    case "pattern":
      return PATTERNS[n.pattern ?? ""] ?? `must match ${n.pattern}`;
    case "format":
      return n.format === "uri" ? "must be a URL such as https://api.example.com" : `must be a ${n.format}`;
    case "false":
      return "is not a field here (unknown fields are refused)";
    default:
      return unit.error;
  }
}

/** Turns the validator's output into one issue per field and message. */
export function issuesOf(schema: Schema, units: OutputUnit[]): Issue[] {
  const seen = new Set<string>();
  const issues: Issue[] = [];
  for (const unit of units) {
    if (AGGREGATES.has(unit.keyword)) continue;
    let path = fromPointer(unit.instanceLocation);
    let message = sentence(unit, schemaAt(schema, unit.keywordLocation));
    if (unit.keyword === "required") {
      // Reported on the object; the field that is missing is where the user has to act.
      const missing = /property "([^"]+)"/.exec(unit.error)?.[1];
      if (missing !== undefined) path = [...path, missing];
      message = "is required";
    }
    const key = `${pathKey(path)}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ path: pathKey(path), message, source: "schema" });
  }
  return issues;
}

/** A check built from a schema document (the one the server serves). */
export function artifactCheck(schema: Schema): ArtifactCheck {
  const validator = new Validator(schema, "2020-12", false);
  return (value) => {
    const result = validator.validate(value);
    return result.valid ? [] : issuesOf(schema, result.errors);
  };
}

/** The server's 400 `details` (`[{path, message}]`), when that is what they are. */
export function serverIssues(details: unknown): Issue[] {
  if (!Array.isArray(details)) return [];
  return details.flatMap((d: unknown) => {
    if (typeof d !== "object" || d === null) return [];
    const { path, message } = d as { path?: unknown; message?: unknown };
    if (typeof path !== "string" || typeof message !== "string") return [];
    return [{ path: path === "" ? "(root)" : path, message, source: "server" as const }];
  });
}
