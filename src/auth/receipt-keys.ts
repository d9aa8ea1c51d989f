// Erasure receipt signing keys (docs/privacy.md): Ed25519, by `kid`, from `RECEIPT_SIGNING_KEYS`; public halves as a JWKS.
import { CompactSign, type JWK } from "jose";
import { utf8 } from "../shared/bytes";
import { parseKeySet } from "./signing-keys";

export const RECEIPT_TYP = "erasure-receipt+jws";

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows. */
const PKCS8_ED25519_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

export interface ReceiptKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public JWK as `/.well-known/jwks.json` lists it. */
  publicJwk: JWK;
}

const cache = new Map<string, Promise<{ current: ReceiptKey; all: ReceiptKey[] }>>();

/**
 * The key of one secret: the Ed25519 seed is SHA-256 of the secret's UTF-8 bytes, so any secret of 32+ characters
 * (what `npm run dev` and the README generate) is a key, and the public half is derived, never configured apart.
 */
async function receiptKey(kid: string, secret: Uint8Array): Promise<ReceiptKey> {
  const seed = new Uint8Array(await crypto.subtle.digest("SHA-256", secret));
  const pkcs8 = new Uint8Array(PKCS8_ED25519_PREFIX.length + seed.length);
  pkcs8.set(PKCS8_ED25519_PREFIX);
  pkcs8.set(seed, PKCS8_ED25519_PREFIX.length);
  const extractable = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = (await crypto.subtle.exportKey("jwk", extractable)) as JsonWebKey;
  if (typeof jwk.x !== "string") throw new Error("The receipt key has no public half.");
  const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
  return {
    kid,
    privateKey,
    publicJwk: { kty: "OKP", crv: "Ed25519", x: jwk.x, kid, alg: "EdDSA", use: "sig" },
  };
}

/** `RECEIPT_SIGNING_KEYS` (a key set like `LAUNCH_TOKEN_KEYS`): the current key signs, every listed one verifies. */
export function receiptKeys(env: Pick<Env, "RECEIPT_SIGNING_KEYS">) {
  const raw = env.RECEIPT_SIGNING_KEYS;
  const hit = cache.get(raw);
  if (hit !== undefined) return hit;
  const set = parseKeySet(raw);
  const loading = Promise.all([...set.verifying].map(([kid, secret]) => receiptKey(kid, secret))).then(
    (all) => {
      const current = all.find((key) => key.kid === set.currentKid);
      if (current === undefined) throw new Error("The current receipt key is not in the key map.");
      return { current, all };
    },
  );
  loading.catch(() => cache.delete(raw));
  cache.set(raw, loading);
  return loading;
}

/** `/.well-known/jwks.json`: the receipt keys' public halves. */
export async function receiptJwks(env: Pick<Env, "RECEIPT_SIGNING_KEYS">): Promise<{ keys: JWK[] }> {
  const { all } = await receiptKeys(env);
  return { keys: all.map((key) => key.publicJwk) };
}

export interface ReceiptPayload {
  id: string;
  tenantId: string;
  scope: { agentId?: string; kind: "subject" | "me" };
  threadIds: string[];
  erasedAt: string;
  /** HMAC of the subject under the tenant's digest key (src/auth/subject-digest.ts). */
  subjectDigest: string;
  /** SHA-256s of the attachment objects the erasure deleted (docs/privacy.md#attachments). */
  attachments: string[];
}

/** A compact JWS (EdDSA) over the receipt's JSON. */
export async function signReceipt(env: Pick<Env, "RECEIPT_SIGNING_KEYS">, payload: ReceiptPayload) {
  const { current } = await receiptKeys(env);
  return new CompactSign(utf8(JSON.stringify(payload)))
    .setProtectedHeader({ alg: "EdDSA", kid: current.kid, typ: RECEIPT_TYP })
    .sign(current.privateKey);
}
