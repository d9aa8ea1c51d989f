// Token signing keys by `kid` (launch and visitor tokens): the current key signs, other listed keys still verify,
// retired keys are gone.
import { z } from "zod";

const keySetSchema = z.strictObject({
  current: z.string().min(1).max(64),
  keys: z.record(z.string().min(1).max(64), z.string().min(32)),
  /** Kids that must never verify again, even if still present in `keys` during a rotation. */
  retired: z.array(z.string()).optional(),
});

export interface KeySet {
  currentKid: string;
  currentKey: Uint8Array;
  /** Verifying keys by kid (current included, retired excluded). */
  verifying: Map<string, Uint8Array>;
}

const encoder = new TextEncoder();
const cache = new Map<string, KeySet>();

/** Parses a key-set secret (JSON). Throws on a malformed configuration: that is an operator bug, not input. */
export function parseKeySet(raw: string): KeySet {
  const hit = cache.get(raw);
  if (hit) return hit;
  const parsed = keySetSchema.parse(JSON.parse(raw));
  const retired = new Set(parsed.retired ?? []);
  if (retired.has(parsed.current)) throw new Error("The current signing key is marked retired.");
  const currentSecret = parsed.keys[parsed.current];
  if (currentSecret === undefined) throw new Error("The current signing key id is not in the key map.");
  const verifying = new Map<string, Uint8Array>();
  for (const [kid, secret] of Object.entries(parsed.keys)) {
    if (!retired.has(kid)) verifying.set(kid, encoder.encode(secret));
  }
  const keySet = { currentKid: parsed.current, currentKey: encoder.encode(currentSecret), verifying };
  cache.set(raw, keySet);
  return keySet;
}

const singleKeyCache = new Map<string, KeySet>();

/**
 * A key-set secret that may also be one plain secret, the form `VISITOR_TOKEN_KEY` had before it rotated by `kid`:
 * a value that is not a JSON object is the key set `{current: legacyKid, keys: {[legacyKid]: value}}`, so tokens
 * signed under the plain value keep verifying once it is moved into a key set under that kid. Throws like
 * `parseKeySet` on a malformed configuration.
 */
export function parseKeySetOrSecret(raw: string, legacyKid: string): KeySet {
  if (raw.trimStart().startsWith("{")) return parseKeySet(raw);
  const cacheKey = `${legacyKid}\n${raw}`;
  const hit = singleKeyCache.get(cacheKey);
  if (hit) return hit;
  const key = secretBytes(raw);
  const keySet = { currentKid: legacyKid, currentKey: key, verifying: new Map([[legacyKid, key]]) };
  singleKeyCache.set(cacheKey, keySet);
  return keySet;
}

/** One array per secret, so the imported CryptoKey cached against it (`jwt.ts`) is found again. */
const secretCache = new Map<string, Uint8Array>();

/** A single-key secret (visitor tokens, DO names, peppers) as HMAC key bytes. */
export function secretBytes(secret: string): Uint8Array {
  const hit = secretCache.get(secret);
  if (hit !== undefined) return hit;
  if (secret.length < 32) throw new Error("Secrets must be at least 32 characters.");
  const bytes = encoder.encode(secret);
  secretCache.set(secret, bytes);
  return bytes;
}
