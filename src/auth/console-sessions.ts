// Console session credentials `cs_<id>_<secret>` (docs/api.md): 128-bit ids, 256-bit secrets, stored only as a keyed
// digest; the session's CSRF token is derived from its id, so nothing else is stored and a reload can ask for it again.
import { base32 } from "../control/ids";
import { base64urlEncode, constantTimeEqual, hmacSha256, randomBytes } from "../shared/bytes";
import { toHex } from "../shared/hex";

const SESSION_PATTERN = /^cs_([a-z2-7]{26})_([a-z2-7]{52})$/;
const SESSION_LENGTH = 3 + 26 + 1 + 52;

// Labels keep the pepper's uses apart: a session digest is never an API key's digest, nor a CSRF token.
const DIGEST_LABEL = "console-session:";
const CSRF_LABEL = "console-csrf:";

export interface GeneratedConsoleSession {
  id: string;
  secret: string;
  /** The cookie's value. */
  value: string;
}

export function generateConsoleSession(): GeneratedConsoleSession {
  const id = base32(randomBytes(16));
  const secret = base32(randomBytes(32));
  return { id, secret, value: `cs_${id}_${secret}` };
}

/** A presented cookie value split into id and secret; anything not of the generated shape is `null`. */
export function parseConsoleSession(value: string): { id: string; secret: string } | null {
  if (value.length !== SESSION_LENGTH) return null;
  const match = value.match(SESSION_PATTERN);
  return match === null ? null : { id: match[1]!, secret: match[2]! };
}

/** What D1 holds instead of the secret. */
export async function consoleSessionDigest(pepper: string, secret: string): Promise<string> {
  return toHex(await hmacSha256(pepper, DIGEST_LABEL + secret));
}

export async function verifyConsoleSessionSecret(
  pepper: string,
  secret: string,
  storedDigest: string,
): Promise<boolean> {
  return constantTimeEqual(await consoleSessionDigest(pepper, secret), storedDigest);
}

/** The session's CSRF token: an HMAC of its id, which only this Worker can compute and no other page can read. */
export async function consoleCsrfToken(pepper: string, sessionId: string): Promise<string> {
  return base64urlEncode(await hmacSha256(pepper, CSRF_LABEL + sessionId));
}
