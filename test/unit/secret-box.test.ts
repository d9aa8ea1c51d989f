import { describe, expect, it } from "vitest";
import { openSecret, SecretBoxError, sealSecret } from "../../src/auth/secret-box";
import { base64urlEncode } from "../../src/shared/bytes";

const rawKey = base64urlEncode(new Uint8Array(32).fill(7));

describe("secret box", () => {
  it.each([
    ["a 32-byte base64url key", rawKey],
    ["any other string, stretched with HKDF", "short passphrase"],
  ])("round-trips with %s", async (_label, key) => {
    const sealed = await sealSecret(key, "ten_a", "openai", "value \u2603");
    expect(sealed.iv).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(await openSecret(key, "ten_a", "openai", sealed)).toBe("value \u2603");
  });

  it("derives different keys from different secrets and refuses the wrong one", async () => {
    const sealed = await sealSecret(rawKey, "ten_a", "openai", "v");
    const other = base64urlEncode(new Uint8Array(32).fill(8));
    const sealedOther = await sealSecret(other, "ten_a", "openai", "v");
    expect(sealedOther.keyId).not.toBe(sealed.keyId);
    await expect(openSecret(other, "ten_a", "openai", sealed)).rejects.toBeInstanceOf(SecretBoxError);
    // Even with the key id forged, the ciphertext does not authenticate under another key.
    await expect(
      openSecret(other, "ten_a", "openai", { ...sealed, keyId: sealedOther.keyId }),
    ).rejects.toBeInstanceOf(SecretBoxError);
  });

  it("binds the tenant and alias as associated data", async () => {
    const sealed = await sealSecret(rawKey, "ten_a", "openai", "v");
    await expect(openSecret(rawKey, "ten_b", "openai", sealed)).rejects.toBeInstanceOf(SecretBoxError);
    await expect(openSecret(rawKey, "ten_a", "other", sealed)).rejects.toBeInstanceOf(SecretBoxError);
    await expect(openSecret(rawKey, "ten_a", "openai", { ...sealed, iv: "short" })).rejects.toBeInstanceOf(
      SecretBoxError,
    );
  });

  it("refuses an empty key", async () => {
    await expect(sealSecret("", "ten_a", "x", "v")).rejects.toBeInstanceOf(SecretBoxError);
  });
});
