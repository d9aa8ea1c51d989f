// Tenant API keys `sk_<id>_<secret>`: generated with 128-bit ids and 256-bit secrets, stored only as a peppered digest.
import { base32 } from "../control/ids";
import { constantTimeEqual, hmacSha256, randomBytes } from "../shared/bytes";
import { toHex } from "../shared/hex";

// Lower-case base32 has no `_`, so the two separators split a key unambiguously.
const ID_CHARS = 26; // 16 bytes
const SECRET_CHARS = 52; // 32 bytes
const API_KEY_PATTERN = /^sk_([a-z2-7]{26})_([a-z2-7]{52})$/;
export const API_KEY_LENGTH = 3 + ID_CHARS + 1 + SECRET_CHARS;

export interface GeneratedApiKey {
  id: string;
  /** The whole key, shown to its owner exactly once. */
  plaintext: string;
  secret: string;
  /** `sk_<id>`: safe to show and log. */
  prefix: string;
  last4: string;
}

export function generateApiKey(): GeneratedApiKey {
  const id = base32(randomBytes(16));
  const secret = base32(randomBytes(32));
  const plaintext = `sk_${id}_${secret}`;
  return { id, secret, plaintext, prefix: `sk_${id}`, last4: secret.slice(-4) };
}

/** Splits a presented key into id and secret; anything not exactly of the generated shape is `null`. */
export function parseApiKey(value: string): { id: string; secret: string } | null {
  if (value.length !== API_KEY_LENGTH) return null;
  const match = value.match(API_KEY_PATTERN);
  if (match === null) return null;
  return { id: match[1]!, secret: match[2]! };
}

/** HMAC-SHA256(API_KEY_PEPPER, secret) as hex: what D1 holds instead of the key. */
export async function apiKeyDigest(pepper: string, secret: string): Promise<string> {
  return toHex(await hmacSha256(pepper, secret));
}

/** Compares a presented secret with a stored digest in constant time. */
export async function verifyApiKeySecret(
  pepper: string,
  secret: string,
  storedDigest: string,
): Promise<boolean> {
  return constantTimeEqual(await apiKeyDigest(pepper, secret), storedDigest);
}
