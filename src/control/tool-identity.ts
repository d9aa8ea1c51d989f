// Where a tool's input carries who is calling: JSON pointers (RFC 6901) to runtime identity facts, checked at publish.

/** The runtime facts a tool may ask for in its input. They come from verified claims, never from the model. */
export const IDENTITY_FACTS = ["subject", "tenantId", "agentId", "threadId", "runId"] as const;
export type IdentityFact = (typeof IDENTITY_FACTS)[number];

export const MAX_IDENTITY_POINTERS = 16;
export const MAX_POINTER_LENGTH = 256;
export const MAX_POINTER_DEPTH = 8;

/**
 * Top-level input keys that always name who is calling, declared or not (the behaviour of every artifact since tools
 * existed). Keys are compared lower-cased without `_` and `-`.
 */
const TOP_LEVEL_IDENTITY_KEYS = new Map<string, IdentityFact>([
  ["tenantid", "tenantId"],
  ["agentid", "agentId"],
  ["threadid", "threadId"],
  ["sessionid", "threadId"],
  ["userid", "subject"],
  ["subject", "subject"],
]);

/** Which runtime identity a top-level input key stands for, or `null` for an ordinary argument. */
export function identityKind(key: string): IdentityFact | null {
  return TOP_LEVEL_IDENTITY_KEYS.get(key.toLowerCase().replace(/[_-]/g, "")) ?? null;
}

/**
 * The property names a pointer walks, or `null` when it is not one this product accepts: RFC 6901 syntax (`~0` is
 * `~`, `~1` is `/`, no other escape), naming a property (not the whole input), no empty segment, bounded size.
 */
export function parsePointer(pointer: string): string[] | null {
  if (pointer.length < 2 || pointer.length > MAX_POINTER_LENGTH || !pointer.startsWith("/")) return null;
  const tokens = pointer.slice(1).split("/");
  if (tokens.length > MAX_POINTER_DEPTH) return null;
  const out: string[] = [];
  for (const token of tokens) {
    if (token === "" || /~(?![01])/.test(token)) return null;
    out.push(token.replace(/~1/g, "/").replace(/~0/g, "~"));
  }
  return out;
}

/** The pointer for a property path (the inverse of `parsePointer`). */
export function formatPointer(path: readonly string[]): string {
  return path.map((token) => `/${token.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether a JSON Schema node may describe an object (no `type`, `"object"`, or a type list containing it). */
function mayBeObject(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  if (type === undefined) return true;
  if (typeof type === "string") return type === "object";
  return Array.isArray(type) && type.includes("object");
}

/** Whether a JSON Schema node may hold an identity fact: a string, or null for an anonymous visitor's subject. */
function mayHoldFact(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  if (type === undefined) return true;
  const types: unknown[] = Array.isArray(type) ? type : [type];
  return types.includes("string") || types.includes("null");
}

/** The `properties[name]` schema of a node, when the node declares one as an object. */
function declaredProperty(schema: Record<string, unknown>, name: string): Record<string, unknown> | null {
  const properties = schema.properties;
  if (!isObject(properties) || !Object.hasOwn(properties, name)) return null;
  const child = properties[name];
  return isObject(child) ? child : null;
}

/** Walks `properties` along `path`: what the schema declares in the way of writing a fact there, if anything. */
function schemaProblem(
  path: readonly string[],
  inputSchema: Readonly<Record<string, unknown>>,
): string | null {
  let node: Record<string, unknown> | null = { ...inputSchema };
  for (let depth = 0; node !== null && depth < path.length; depth++) {
    if (!mayBeObject(node)) {
      const through = depth === 0 ? "the input" : formatPointer(path.slice(0, depth));
      return `passes through ${through}, which the input schema does not declare as an object`;
    }
    node = declaredProperty(node, path[depth] ?? "");
  }
  return node !== null && !mayHoldFact(node)
    ? "names a property the input schema does not declare as a string"
    : null;
}

export interface IdentityProblem {
  pointer: string;
  message: string;
}

/**
 * Configuration errors in a tool's `identity` map against its input schema: a malformed pointer, a pointer through
 * something the schema declares as a non-object or to something it declares as neither a string nor null, one
 * pointer inside another, or a pointer through a top-level key the runtime already owns. A path the schema does not declare is allowed: the runtime creates it.
 */
export function identityProblems(
  identity: Readonly<Record<string, unknown>>,
  inputSchema: Readonly<Record<string, unknown>> | undefined,
): IdentityProblem[] {
  const problems: IdentityProblem[] = [];
  const parsed: { pointer: string; path: string[] }[] = [];
  for (const pointer of Object.keys(identity)) {
    const path = parsePointer(pointer);
    if (path === null) {
      problems.push({
        pointer,
        message: `must be a JSON pointer to a property, like /filter/userId (at most ${MAX_POINTER_DEPTH} segments)`,
      });
      continue;
    }
    parsed.push({ pointer, path });
    const [head] = path;
    if (path.length > 1 && head !== undefined && identityKind(head) !== null) {
      problems.push({ pointer, message: `passes through /${head}, which the runtime sets itself` });
      continue;
    }
    const problem = inputSchema === undefined ? null : schemaProblem(path, inputSchema);
    if (problem !== null) problems.push({ pointer, message: problem });
  }
  for (const outer of parsed) {
    for (const inner of parsed) {
      const nested =
        inner.path.length > outer.path.length && outer.path.every((token, i) => inner.path[i] === token);
      const reported = problems.some((problem) => problem.pointer === inner.pointer);
      if (nested && !reported)
        problems.push({ pointer: inner.pointer, message: `is inside ${outer.pointer}` });
    }
  }
  return problems;
}
