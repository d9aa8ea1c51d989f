// Byte encodings and keyed hashing for credentials, written once so every credential uses the same primitives.
import { toHex } from "./hex";

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(encoder.encode(text));
}

export function base64urlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Strict: only the unpadded base64url alphabet; anything else is `null`, never a throw. */
export function base64urlDecode(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function randomBytes(length: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(length));
}

export type HmacUsage = "sign" | "verify";

const hmacKeys = new Map<string, Promise<CryptoKey>>();

/**
 * The HMAC-SHA256 key for a secret string (its UTF-8 bytes) or raw key bytes. Keys derived from Worker secrets are
 * few and stable, so each is imported once per isolate; `cache: false` for keys that are many and a tenant's own.
 */
export function hmacKey(
  secret: string | Uint8Array,
  usages: readonly HmacUsage[] = ["sign"],
  options: { cache?: boolean } = {},
): Promise<CryptoKey> {
  const load = () => {
    const raw = typeof secret === "string" ? utf8(secret) : new Uint8Array(secret);
    return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, [...usages]);
  };
  if (options.cache === false) return load();
  const cacheKey = `${usages.join("+")}|${typeof secret === "string" ? `s:${secret}` : `b:${toHex(secret)}`}`;
  let key = hmacKeys.get(cacheKey);
  if (key === undefined) {
    key = load();
    if (hmacKeys.size < 64) hmacKeys.set(cacheKey, key);
  }
  return key;
}

/** HMAC-SHA256 keyed by the UTF-8 bytes of a secret string (or raw key bytes). */
export async function hmacSha256(
  secret: string | Uint8Array,
  message: string | Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer>> {
  const data = typeof message === "string" ? utf8(message) : message;
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), data));
}

/** Constant-time equality of two strings; a length difference alone is answered early (lengths are public). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = utf8(a);
  const right = utf8(b);
  if (left.byteLength !== right.byteLength) return false;
  return crypto.subtle.timingSafeEqual(left, right);
}

const BASE64_CODES = new TextEncoder().encode(
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
);
const PAD = 61; // "="

/**
 * Standard padded base64 (what model providers take for file bytes). Written into one ASCII buffer and decoded once:
 * a file of megabytes never becomes a binary string or an argument list (10 MiB in about 0.1 s, where a binary
 * string through `btoa` took about 0.45 s).
 */
export function base64Encode(bytes: Uint8Array): string {
  const out = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
  const code = (n: number): number => BASE64_CODES[n & 63] ?? PAD;
  let o = 0;
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out[o++] = code(n >> 18);
    out[o++] = code(n >> 12);
    out[o++] = code(n >> 6);
    out[o++] = code(n);
  }
  if (i < bytes.length) {
    const two = i + 1 < bytes.length;
    const n = ((bytes[i] ?? 0) << 16) | (two ? (bytes[i + 1] ?? 0) << 8 : 0);
    out[o++] = code(n >> 18);
    out[o++] = code(n >> 12);
    out[o++] = two ? code(n >> 6) : PAD;
    out[o++] = PAD;
  }
  return new TextDecoder().decode(out);
}

/** The bytes of standard base64; `null` for anything that is not, never a throw. */
export function base64Decode(text: string): Uint8Array<ArrayBuffer> | null {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
