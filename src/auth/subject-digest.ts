// The per-tenant subject digest key and digests (docs/privacy.md#receipts): a receipt names its subject only as an HMAC.
import { base64urlEncode, hmacKey, utf8 } from "../shared/bytes";

/** HKDF salt: separates this key from every other use of `DO_NAME_KEY` (object names, scope hashes). */
const SALT = "agent-threads subject-digest-key v1";

/**
 * The tenant's subject digest key: 32 bytes of HKDF-SHA-256 over `DO_NAME_KEY`, with the tenant id as `info`. Derived,
 * never stored, and stable for as long as `DO_NAME_KEY` is (it never rotates), so a receipt's digest can be checked
 * for years. HKDF's output reveals nothing of `DO_NAME_KEY`, and no other key is derived with this salt.
 */
export async function subjectDigestKey(env: Pick<Env, "DO_NAME_KEY">, tenantId: string): Promise<Uint8Array> {
  const ikm = await crypto.subtle.importKey("raw", utf8(env.DO_NAME_KEY), "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: utf8(SALT), info: utf8(tenantId) },
    ikm,
    256,
  );
  return new Uint8Array(bits);
}

/** base64url (unpadded) of HMAC-SHA-256 over the subject's UTF-8 bytes, under the tenant's digest key. */
export async function subjectDigest(
  env: Pick<Env, "DO_NAME_KEY">,
  tenantId: string,
  subject: string,
): Promise<string> {
  const key = await hmacKey(await subjectDigestKey(env, tenantId), ["sign"], { cache: false });
  return base64urlEncode(new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8(subject))));
}
