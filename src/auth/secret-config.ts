// Which Worker secrets are unset or malformed, by name only: what GET /v1/ready reports, never a value.
import { parseKeySet, parseKeySetOrSecret, secretBytes } from "./signing-keys";
import { LEGACY_VISITOR_KID } from "./visitor-token";

export type SecretName =
  | "LAUNCH_TOKEN_KEYS"
  | "VISITOR_TOKEN_KEY"
  | "DO_NAME_KEY"
  | "API_KEY_PEPPER"
  | "SECRETS_KEY"
  | "OPERATOR_TOKEN"
  | "RECEIPT_SIGNING_KEYS";

/** Each secret as the code that uses it reads it; a secret is usable when this does not throw. */
const PARSERS: Record<SecretName, (value: string) => unknown> = {
  LAUNCH_TOKEN_KEYS: (value) => parseKeySet(value),
  VISITOR_TOKEN_KEY: (value) => parseKeySetOrSecret(value, LEGACY_VISITOR_KID),
  // Single keys: at least 32 characters (README), the rule `secretBytes` enforces for HMAC keys.
  DO_NAME_KEY: secretBytes,
  API_KEY_PEPPER: secretBytes,
  SECRETS_KEY: secretBytes,
  OPERATOR_TOKEN: secretBytes,
  // Erasure receipts (Ed25519 seeds derived per kid, `receipt-keys.ts`): a key set like the launch keys.
  RECEIPT_SIGNING_KEYS: (value) => parseKeySet(value),
};

export const SECRET_NAMES = Object.keys(PARSERS) as SecretName[];

/** The secrets that are missing or do not parse, in a fixed order. */
export function unusableSecrets(env: Partial<Record<SecretName, unknown>>): SecretName[] {
  return SECRET_NAMES.filter((name) => {
    const value = env[name];
    if (typeof value !== "string" || value.length === 0) return true;
    try {
      PARSERS[name](value);
      return false;
    } catch {
      return true;
    }
  });
}
