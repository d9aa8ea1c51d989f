// Signs and verifies our HS256 JWTs with jose: one algorithm, a required `typ`, iss/aud/exp/iat/jti, size cap first.
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { z } from "zod";
import { AppError } from "../errors";
import { hmacKey } from "../shared/bytes";
import { MAX_TOKEN_BYTES } from "./token-policy";

const FORBIDDEN_HEADERS = ["jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256", "crit", "b64"] as const;

export interface VerifyOptions<S extends z.ZodType> {
  typ: string;
  issuer: string;
  audience: string;
  /** Verifying keys by kid; a token without a known kid is refused. */
  keys: ReadonlyMap<string, Uint8Array>;
  leewaySeconds: number;
  /** Maximum `exp - iat` and maximum age since `iat`. */
  maxLifetimeSeconds: number;
  claims: S;
  now: Date;
}

/** Why a token was refused; logged, never sent to the client. */
export type TokenFailure = { ok: false; reason: string; expired: boolean };
export type TokenResult<T> = { ok: true; claims: T } | TokenFailure;

const refuse = (reason: string, expired = false): TokenFailure => ({ ok: false, reason, expired });

/** HS256 keys imported once per isolate (`hmacKey`) rather than on every sign and verify, as jose would. */
const hs256Key = (secret: Uint8Array): Promise<CryptoKey> => hmacKey(secret, ["sign", "verify"]);

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * Unpadded base64url whose unused trailing bits are zero. Decoders ignore those bits, so without this check one
 * signature has several spellings and a token can be altered without breaking it.
 */
function canonicalSegment(segment: string): boolean {
  const tail = segment.length % 4;
  if (tail === 1) return false;
  if (tail === 0) return true;
  const unusedBits = tail === 2 ? 4 : 2;
  return (B64URL.indexOf(segment.at(-1)!) & ((1 << unusedBits) - 1)) === 0;
}

export async function verifyJwt<S extends z.ZodType>(
  token: string,
  options: VerifyOptions<S>,
): Promise<TokenResult<z.output<S>>> {
  if (token.length === 0 || token.length > MAX_TOKEN_BYTES) return refuse("size");
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return refuse("shape");
  if (!token.split(".").every(canonicalSegment)) return refuse("encoding");
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return refuse("header");
  }
  for (const name of FORBIDDEN_HEADERS) {
    if (name in header) return refuse(`header:${name}`);
  }
  if (header.alg !== "HS256") return refuse("alg");
  if (typeof header.kid !== "string") return refuse("kid");
  const key = options.keys.get(header.kid);
  if (key === undefined) return refuse("kid-unknown");

  let payload: Record<string, unknown>;
  try {
    const result = await jwtVerify(token, await hs256Key(key), {
      algorithms: ["HS256"],
      typ: options.typ,
      issuer: options.issuer,
      audience: options.audience,
      clockTolerance: options.leewaySeconds,
      maxTokenAge: options.maxLifetimeSeconds + options.leewaySeconds,
      requiredClaims: ["iss", "aud", "exp", "iat", "jti"],
      currentDate: options.now,
    });
    payload = result.payload;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) return refuse("expired", true);
    return refuse(error instanceof joseErrors.JOSEError ? error.code : "verify");
  }

  const { exp, iat } = payload;
  if (
    typeof exp !== "number" ||
    typeof iat !== "number" ||
    !Number.isInteger(exp) ||
    !Number.isInteger(iat)
  ) {
    return refuse("time-claims");
  }
  if (iat > Math.floor(options.now.getTime() / 1000) + options.leewaySeconds) return refuse("iat-future");
  if (exp - iat > options.maxLifetimeSeconds || exp <= iat) return refuse("lifetime");
  if (typeof payload.jti !== "string" || payload.jti.length === 0) return refuse("jti");

  const claims = options.claims.safeParse(payload);
  if (!claims.success) return refuse("claims");
  return { ok: true, claims: claims.data };
}

export async function signJwt(
  claims: Record<string, unknown>,
  options: {
    typ: string;
    kid: string;
    key: Uint8Array;
    issuer: string;
    audience: string;
    ttlSeconds: number;
    now: Date;
  },
): Promise<{ token: string; expiresAt: Date; jti: string }> {
  const iat = Math.floor(options.now.getTime() / 1000);
  const exp = iat + options.ttlSeconds;
  const jti = crypto.randomUUID();
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: options.typ, kid: options.kid })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(await hs256Key(options.key));
  return { token, expiresAt: new Date(exp * 1000), jti };
}

/** The uniform 401 every token failure becomes at the edge. */
export function tokenError(failure: TokenFailure): AppError {
  return failure.expired
    ? new AppError("token_expired", "The token has expired.")
    : new AppError("unauthenticated", "Authentication required.");
}
