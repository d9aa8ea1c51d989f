// Builders for valid and deliberately broken tokens, signed with the test keys from vitest.config.ts.
import { env } from "cloudflare:workers";
import { SignJWT } from "jose";

const enc = new TextEncoder();

export function b64url(input: string | Uint8Array): string {
  const bytes = typeof input === "string" ? enc.encode(input) : input;
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function launchKeys(): { current: string; keys: Record<string, string> } {
  return JSON.parse(env.LAUNCH_TOKEN_KEYS);
}

/** The test visitor key set (vitest.config.ts writes VISITOR_TOKEN_KEY as a key set). */
export function visitorKeys(): { current: string; keys: Record<string, string> } {
  return JSON.parse(env.VISITOR_TOKEN_KEY);
}

/** Header and claim overrides; an `undefined` value removes that field. */
export interface ForgeOptions {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  key?: string | Uint8Array;
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

export function baseLaunchClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: "agent-threads",
    aud: "agent-threads:development",
    iat: now,
    exp: now + 300,
    jti: crypto.randomUUID(),
    tenantId: "ten_test",
    agentEntityId: "agt_test",
    environment: "development",
    threadId: "thr_00000000000000000000000000000000",
    sub: "vis_00000000000000000000000000000000",
    subjectKind: "visitor",
    ...overrides,
  };
}

/** Signs arbitrary header + claims with HMAC, bypassing every check a real issuer makes. */
export async function forgeToken(options: ForgeOptions = {}): Promise<string> {
  const keys = launchKeys();
  const claims = withoutUndefined({ ...baseLaunchClaims(), ...(options.claims ?? {}) });
  const header = withoutUndefined({
    alg: "HS256",
    typ: "agent-launch+jwt",
    kid: keys.current,
    ...(options.header ?? {}),
  });
  const key = options.key ?? keys.keys[keys.current]!;
  const keyBytes = typeof key === "string" ? enc.encode(key) : key;
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const hash = header.alg === "HS512" ? "SHA-512" : "SHA-256";
  const cryptoKey = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash }, false, ["sign"]);
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, enc.encode(signingInput)));
  return `${signingInput}.${b64url(sig)}`;
}

export async function signWithJose(
  claims: Record<string, unknown>,
  kid: string,
  secret: string,
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "agent-launch+jwt", kid })
    .sign(enc.encode(secret));
}
