import { describe, expect, it } from "vitest";
import { apiKeyDigest, generateApiKey, parseApiKey, verifyApiKeySecret } from "../../src/auth/api-keys";
import { hmacSha256 } from "../../src/shared/bytes";
import { toHex } from "../../src/shared/hex";

describe("API key format", () => {
  it("generates sk_<id>_<secret> that parses back into its parts", () => {
    const key = generateApiKey();
    expect(key.plaintext).toMatch(/^sk_[a-z2-7]{26}_[a-z2-7]{52}$/);
    expect(parseApiKey(key.plaintext)).toEqual({ id: key.id, secret: key.secret });
    expect(key.prefix).toBe(`sk_${key.id}`);
    expect(key.last4).toBe(key.plaintext.slice(-4));
    expect(generateApiKey().id).not.toBe(key.id);
  });

  it.each([
    "",
    "sk_",
    "pk_aaaaaaaaaaaaaaaaaaaaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "sk_aaaaaaaaaaaaaaaaaaaaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "sk_aaaaaaaaaaaaaaaaaaaaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "sk_aaaaaaaaaaaaaaaaaaaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "sk_AAAAAAAAAAAAAAAAAAAAAAAAAA_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "sk_aaaaaaaaaaaaaaaaaaaaaaaaaa-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "sk_aaaaaaaaaaaaaaaaaaaaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1",
    "sk_aaaaaaaaaaaaaaaaaaaaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
  ])("refuses %j", (value) => {
    expect(parseApiKey(value)).toBeNull();
  });

  it("digests the secret with HMAC-SHA256 keyed by the pepper, and verifies only the right secret", async () => {
    const key = generateApiKey();
    const digest = await apiKeyDigest("pepper-one", key.secret);
    expect(digest).toBe(toHex(await hmacSha256("pepper-one", key.secret)));
    expect(digest).not.toBe(await apiKeyDigest("pepper-two", key.secret));
    expect(await verifyApiKeySecret("pepper-one", key.secret, digest)).toBe(true);
    expect(await verifyApiKeySecret("pepper-two", key.secret, digest)).toBe(false);
    expect(await verifyApiKeySecret("pepper-one", generateApiKey().secret, digest)).toBe(false);
    expect(await verifyApiKeySecret("pepper-one", key.secret, "")).toBe(false);
  });
});
