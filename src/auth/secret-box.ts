// Tenant provider secrets at rest: AES-256-GCM under SECRETS_KEY, bound to their tenant and alias as associated data.

import { base64urlDecode, base64urlEncode, randomBytes, utf8 } from "../shared/bytes";
import { toHex } from "../shared/hex";
import { getTenantSecret } from "../storage/d1/tenant-credentials";

export interface SealedSecret {
  ciphertext: string;
  iv: string;
  /** Fingerprint of the key that sealed it, so a rotated key is recognised rather than guessed at. */
  keyId: string;
}

export class SecretBoxError extends Error {}

interface SecretsKey {
  key: CryptoKey;
  id: string;
}

const HKDF_SALT = utf8("agent-threads/secrets-key/v1");
const HKDF_INFO = utf8("aes-256-gcm tenant secrets");
const keys = new Map<string, Promise<SecretsKey>>();

async function deriveKeyBytes(secret: string): Promise<Uint8Array<ArrayBuffer>> {
  const decoded = base64urlDecode(secret.trim());
  if (decoded !== null && decoded.byteLength === 32) return decoded;
  // Any other secret string is key material of unknown quality: stretch it with HKDF rather than refuse it.
  const material = await crypto.subtle.importKey("raw", utf8(secret), "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: HKDF_INFO },
    material,
    256,
  );
  return new Uint8Array(bits);
}

async function importSecretsKey(secret: string): Promise<SecretsKey> {
  if (secret.length === 0) throw new SecretBoxError("SECRETS_KEY is not configured.");
  const raw = await deriveKeyBytes(secret);
  const fingerprint = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new Uint8Array([...utf8("agent-threads/secrets-key-id/v1\n"), ...raw]),
    ),
  );
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
  return { key, id: toHex(fingerprint.slice(0, 8)) };
}

function secretsKey(secret: string): Promise<SecretsKey> {
  let key = keys.get(secret);
  if (key === undefined) {
    key = importSecretsKey(secret);
    keys.set(secret, key);
  }
  return key;
}

function associatedData(tenantId: string, alias: string): Uint8Array<ArrayBuffer> {
  // A row copied to another tenant (or another alias) no longer authenticates.
  return utf8(JSON.stringify(["agent-threads/tenant-secret/v1", tenantId, alias]));
}

export async function sealSecret(
  secretsKeyValue: string,
  tenantId: string,
  alias: string,
  plaintext: string,
): Promise<SealedSecret> {
  const { key, id } = await secretsKey(secretsKeyValue);
  const iv = randomBytes(12);
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: associatedData(tenantId, alias) },
    key,
    utf8(plaintext),
  );
  return { ciphertext: base64urlEncode(new Uint8Array(ciphertext)), iv: base64urlEncode(iv), keyId: id };
}

/** Throws SecretBoxError when the row was sealed by another key, for another tenant or alias, or altered. */
export async function openSecret(
  secretsKeyValue: string,
  tenantId: string,
  alias: string,
  sealed: SealedSecret,
): Promise<string> {
  const { key, id } = await secretsKey(secretsKeyValue);
  if (sealed.keyId !== id) throw new SecretBoxError("Secret was sealed with a key that is not configured.");
  const iv = base64urlDecode(sealed.iv);
  const ciphertext = base64urlDecode(sealed.ciphertext);
  if (iv === null || iv.byteLength !== 12 || ciphertext === null) {
    throw new SecretBoxError("Sealed secret is malformed.");
  }
  let plaintext: ArrayBuffer;
  try {
    plaintext = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv, additionalData: associatedData(tenantId, alias) },
      key,
      ciphertext,
    );
  } catch (cause) {
    throw new SecretBoxError("Sealed secret does not authenticate.", { cause });
  }
  return new TextDecoder().decode(plaintext);
}

/** The model layer's way to a provider credential: `null` when the tenant has no secret under that alias. */
export async function decryptTenantSecret(env: Env, tenantId: string, alias: string): Promise<string | null> {
  const row = await getTenantSecret(env.DB, tenantId, alias);
  if (row === null) return null;
  return openSecret(env.SECRETS_KEY, tenantId, alias, row);
}
