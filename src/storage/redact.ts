// Secrets never reach thread storage: every value is scrubbed of known secrets and key-shaped strings before a write.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const REDACTED = "[REDACTED]";
const CIRCULAR = "[Circular]";
const MAX_DEPTH_MARK = "[MaxDepth]";
const MAX_DEPTH = 32;

/**
 * Credential shapes that are redacted even when nobody listed them: they must never be stored by accident.
 * Each pattern keeps a harmless prefix (group 1, if any) so a reader still sees what kind of value was there.
 */
const KEY_SHAPES: readonly RegExp[] = [
  // Authorization header values.
  /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  // JWTs, including launch and visitor tokens and `bearer.<token>` subprotocol entries.
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  // Tenant API keys (`sk_<id>_<secret>`) and common provider keys (`sk-…`, `sk-ant-…`, `sk-proj-…`).
  /\bsk[_-][A-Za-z0-9_-]{16,}/g,
  // GitHub, Slack and AWS access keys.
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

/** Redacts strings; built once per secret list so repeated writes do not re-sort the secrets. */
export interface Redactor {
  text(value: string): string;
  value(value: unknown): JsonValue;
}

export function createRedactor(secrets: readonly string[]): Redactor {
  // Longest first, so a secret that contains another secret is removed whole.
  const known = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);

  const text = (value: string): string => {
    let out = value;
    for (const secret of known) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    for (const shape of KEY_SHAPES) {
      out = out.replace(shape, (_match, prefix: unknown) =>
        typeof prefix === "string" ? `${prefix}${REDACTED}` : REDACTED,
      );
    }
    return out;
  };

  const walk = (value: unknown, depth: number, ancestors: Set<object>): JsonValue | undefined => {
    if (value === null) return null;
    switch (typeof value) {
      case "string":
        return text(value);
      case "number":
        return Number.isFinite(value) ? value : null;
      case "boolean":
        return value;
      case "bigint":
        return text(value.toString());
      case "object":
        break;
      default:
        // undefined, functions and symbols have no JSON form.
        return undefined;
    }
    if (depth >= MAX_DEPTH) return MAX_DEPTH_MARK;
    if (ancestors.has(value)) return CIRCULAR;
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    if (value instanceof Error) {
      return walk({ name: value.name, message: value.message }, depth, ancestors);
    }
    ancestors.add(value);
    try {
      if (Array.isArray(value) || value instanceof Set) {
        return Array.from(value, (item: unknown) => walk(item, depth + 1, ancestors) ?? null);
      }
      const pairs: Iterable<[unknown, unknown]> =
        value instanceof Map ? value.entries() : Object.entries(value as Record<string, unknown>);
      const out: { [key: string]: JsonValue } = {};
      for (const [rawKey, item] of pairs) {
        const redactedItem = walk(item, depth + 1, ancestors);
        if (redactedItem === undefined) continue;
        const baseKey = text(String(rawKey));
        let key = baseKey;
        // Two keys can collapse into the same redacted key; keep both values.
        for (let n = 2; Object.hasOwn(out, key); n++) key = `${baseKey}__${n}`;
        // defineProperty, not assignment: a `__proto__` key must stay data, never become a prototype.
        Object.defineProperty(out, key, {
          value: redactedItem,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    } finally {
      ancestors.delete(value);
    }
  };

  return { text, value: (value) => walk(value, 0, new Set()) ?? null };
}

/** Replaces every occurrence of each secret (and of common key shapes) with `[REDACTED]`, deep in a JSON value. */
export function redact(value: unknown, secrets: readonly string[]): JsonValue {
  return createRedactor(secrets).value(value);
}

/** Replaces every occurrence of each secret (and of common key shapes) in one string. */
export function redactText(value: string, secrets: readonly string[]): string {
  return createRedactor(secrets).text(value);
}
