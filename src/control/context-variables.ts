// A thread's context variables (docs/protocol.md): what a private launch's `context` may hold, and its one stored spelling.
import { z } from "zod";
import { canonicalJson } from "./canonical-json";

export const CONTEXT_MAX_KEYS = 32;
export const CONTEXT_MAX_STRING_CHARS = 1_000;
/** The whole object, serialised as JSON, in UTF-8 bytes. */
export const CONTEXT_MAX_BYTES = 8 * 1024;
export const CONTEXT_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export type ContextValue = string | number | boolean;
export type ContextVariables = Readonly<Record<string, ContextValue>>;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function valueProblem(value: unknown): string | null {
  switch (typeof value) {
    case "string":
      return value.length > CONTEXT_MAX_STRING_CHARS
        ? `must be at most ${CONTEXT_MAX_STRING_CHARS} characters`
        : null;
    case "number":
      // JSON's 1e400 parses as Infinity.
      return Number.isFinite(value) ? null : "must be a finite number";
    case "boolean":
      return null;
    default:
      return "must be a string, number or boolean";
  }
}

/**
 * A launch's `context`, every problem named by its field path. `__proto__` matches the key pattern but is refused:
 * an object built from it would either lose the key or change its own prototype. Past the key limit only the count
 * is reported, so a hostile body cannot make a long answer.
 */
export const contextVariablesSchema = z
  .custom<Record<string, unknown>>(isPlainObject, "must be an object of variables")
  .superRefine((value, ctx) => {
    const keys = Object.keys(value);
    if (keys.length > CONTEXT_MAX_KEYS) {
      ctx.addIssue({
        code: "custom",
        message: `must have at most ${CONTEXT_MAX_KEYS} variables (it has ${keys.length})`,
      });
      return;
    }
    for (const key of keys) {
      if (!CONTEXT_KEY_PATTERN.test(key)) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "a variable name must be a letter or _ followed by up to 63 letters, digits or _",
        });
      } else if (key === "__proto__") {
        ctx.addIssue({ code: "custom", path: [key], message: "is a reserved name" });
      }
      const problem = valueProblem(value[key]);
      if (problem !== null) ctx.addIssue({ code: "custom", path: [key], message: problem });
    }
    const bytes = new TextEncoder().encode(JSON.stringify(value)).byteLength;
    if (bytes > CONTEXT_MAX_BYTES) {
      ctx.addIssue({
        code: "custom",
        message: `must be at most ${CONTEXT_MAX_BYTES} bytes as JSON (it is ${bytes})`,
      });
    }
  })
  .transform((value): ContextVariables => {
    const variables: [string, ContextValue][] = [];
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === "string" || typeof item === "number" || typeof item === "boolean")
        variables.push([key, item]);
    }
    // fromEntries defines own properties: no key can reach a prototype.
    return Object.fromEntries(variables);
  });

/** The one text a context is stored and compared as (canonical JSON), or null for none: `{}` is no context. */
export function contextText(variables: ContextVariables | null): string | null {
  return variables === null || Object.keys(variables).length === 0 ? null : canonicalJson(variables);
}

/** Stored context text read back; anything unreadable counts as no context. */
export function parseContextText(text: string | null): ContextVariables {
  if (text === null) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  const parsed = contextVariablesSchema.safeParse(value);
  return parsed.success ? parsed.data : {};
}
