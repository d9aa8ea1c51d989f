// Canonical JSON (sorted keys, no undefined, finite numbers only) and the SHA-256 digest artifacts are pinned by.
import { utf8 } from "../shared/bytes";
import { toHex } from "../shared/hex";

export class CanonicalJsonError extends Error {}

function canonicalize(value: unknown, path: string): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new CanonicalJsonError(`Non-finite number at ${path || "(root)"}.`);
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) {
        return `[${value
          .map((item, i) => {
            if (item === undefined) throw new CanonicalJsonError(`undefined at ${path}[${i}].`);
            return canonicalize(item, `${path}[${i}]`);
          })
          .join(",")}]`;
      }
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalize(v, path ? `${path}.${k}` : k)}`).join(",")}}`;
    }
    default:
      throw new CanonicalJsonError(`Unsupported ${typeof value} at ${path || "(root)"}.`);
  }
}

/** Serialises a JSON value canonically; throws CanonicalJsonError for values JSON cannot hold faithfully. */
export function canonicalJson(value: unknown): string {
  return canonicalize(value, "");
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(text))));
}

/** `sha256:<hex>` over the canonical JSON of `value`. */
export async function digestOf(value: unknown): Promise<string> {
  return `sha256:${await sha256Hex(canonicalJson(value))}`;
}
