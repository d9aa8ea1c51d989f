// Standard Webhooks signatures: the reference vector, exact-body verification, tolerance, secret formats, and
// agreement with the reference `standardwebhooks` library both ways.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookSecretError,
  webhookSecretRedactions,
  webhookSigningKey,
} from "../../src/tools/webhook-signature";

// The example in the Standard Webhooks specification and its reference libraries' tests.
const SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const SPEC_TIMESTAMP = 1614265330;
const SPEC_BODY = '{"test": 2432232314}';
const SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

describe("signWebhook", () => {
  it("matches the specification's reference signature", async () => {
    const headers = await signWebhook({
      secret: SPEC_SECRET,
      id: SPEC_ID,
      timestamp: SPEC_TIMESTAMP,
      body: SPEC_BODY,
    });
    expect(headers).toEqual({
      "webhook-id": SPEC_ID,
      "webhook-timestamp": String(SPEC_TIMESTAMP),
      "webhook-signature": SPEC_SIGNATURE,
    });
  });

  it("signs with the key after the prefix, so the prefix is optional", async () => {
    const bare = await signWebhook({
      secret: SPEC_SECRET.slice("whsec_".length),
      id: SPEC_ID,
      timestamp: SPEC_TIMESTAMP,
      body: SPEC_BODY,
    });
    expect(bare["webhook-signature"]).toBe(SPEC_SIGNATURE);
  });

  it("throws for a secret that is not base64 key material", async () => {
    for (const secret of ["", "whsec_", "whsec_not base64!", "whsec_a"]) {
      expect(webhookSigningKey(secret)).toBeNull();
      await expect(signWebhook({ secret, id: "msg_1", timestamp: 1, body: "{}" })).rejects.toBeInstanceOf(
        WebhookSecretError,
      );
    }
  });
});

describe("verifyWebhook", () => {
  const now = SPEC_TIMESTAMP * 1000 + 30_000;
  const headers = {
    "webhook-id": SPEC_ID,
    "webhook-timestamp": String(SPEC_TIMESTAMP),
    "webhook-signature": SPEC_SIGNATURE,
  };

  it("accepts the exact body, with Headers or a plain record", async () => {
    expect(await verifyWebhook({ secret: SPEC_SECRET, headers, body: SPEC_BODY, now })).toEqual({
      ok: true,
      id: SPEC_ID,
      timestamp: SPEC_TIMESTAMP,
    });
    const asHeaders = new Headers(headers);
    expect((await verifyWebhook({ secret: SPEC_SECRET, headers: asHeaders, body: SPEC_BODY, now })).ok).toBe(
      true,
    );
  });

  it("refuses a body that differs by one byte, even in whitespace", async () => {
    for (const body of ['{"test":2432232314}', '{"test": 2432232315}', `${SPEC_BODY} `, ""]) {
      expect(await verifyWebhook({ secret: SPEC_SECRET, headers, body, now })).toEqual({
        ok: false,
        reason: "bad_signature",
      });
    }
  });

  it("refuses an edited id or timestamp, a wrong secret and a forged or truncated signature", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ ...headers, "webhook-id": "msg_other" }, SPEC_SECRET],
      [{ ...headers, "webhook-timestamp": String(SPEC_TIMESTAMP + 1) }, SPEC_SECRET],
      [headers, "whsec_dGhlLXdyb25nLXNlY3JldC0wMTIzNDU2Nzg5"],
      [{ ...headers, "webhook-signature": "v1,AAAA" }, SPEC_SECRET],
      [{ ...headers, "webhook-signature": SPEC_SIGNATURE.slice(0, -4) }, SPEC_SECRET],
      [{ ...headers, "webhook-signature": SPEC_SIGNATURE.replace("v1,", "v2,") }, SPEC_SECRET],
      [{ ...headers, "webhook-signature": SPEC_SIGNATURE.replace("v1,", "v1a,") }, SPEC_SECRET],
    ];
    for (const [h, secret] of cases) {
      expect(await verifyWebhook({ secret, headers: h, body: SPEC_BODY, now })).toEqual({
        ok: false,
        reason: "bad_signature",
      });
    }
  });

  it("accepts one matching signature among several (a rotation)", async () => {
    const rotated = {
      ...headers,
      "webhook-signature": `v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= ${SPEC_SIGNATURE}`,
    };
    expect((await verifyWebhook({ secret: SPEC_SECRET, headers: rotated, body: SPEC_BODY, now })).ok).toBe(
      true,
    );
  });

  it("refuses missing headers, a malformed timestamp and one outside the tolerance", async () => {
    const { "webhook-id": _, ...noId } = headers;
    expect(await verifyWebhook({ secret: SPEC_SECRET, headers: noId, body: SPEC_BODY, now })).toEqual({
      ok: false,
      reason: "missing_headers",
    });
    expect(
      await verifyWebhook({
        secret: SPEC_SECRET,
        headers: { ...headers, "webhook-timestamp": "1614265330.5" },
        body: SPEC_BODY,
        now,
      }),
    ).toEqual({ ok: false, reason: "invalid_timestamp" });
    for (const skew of [-301_000, 301_000]) {
      expect(
        await verifyWebhook({
          secret: SPEC_SECRET,
          headers,
          body: SPEC_BODY,
          now: SPEC_TIMESTAMP * 1000 + skew,
        }),
      ).toEqual({ ok: false, reason: "timestamp_out_of_range" });
    }
    expect(await verifyWebhook({ secret: "whsec_!!", headers, body: SPEC_BODY, now })).toEqual({
      ok: false,
      reason: "invalid_secret",
    });
  });

  it("round-trips what signWebhook produced", async () => {
    const secret = "whsec_dGVzdC10b29sLXNpZ25pbmctc2VjcmV0LTAxMjM0NTY3";
    const body = JSON.stringify({ tool: "lookup", input: { q: "ünïcødé ✓" } });
    const signed = await signWebhook({ secret, id: "msg_abc", timestamp: 1_700_000_000, body });
    expect(await verifyWebhook({ secret, headers: signed, body, now: 1_700_000_000_000 })).toMatchObject({
      ok: true,
    });
  });
});

describe("webhookSecretRedactions", () => {
  it("lists the whole secret and its key's base64 spellings", () => {
    expect(webhookSecretRedactions("whsec_ab+/cQ==")).toEqual(["whsec_ab+/cQ==", "ab+/cQ", "ab-_cQ"]);
    // A key written with non-zero trailing bits re-encodes differently; both spellings are listed.
    expect(webhookSecretRedactions("whsec_ab-_cd")).toEqual([
      "whsec_ab-_cd",
      "ab-_cd",
      "ab+/cd",
      "ab+/cQ",
      "ab-_cQ",
    ]);
    expect(webhookSecretRedactions("not base64!")).toEqual(["not base64!"]);
    expect(webhookSecretRedactions("  ")).toEqual([]);
  });
});

describe("against the reference standardwebhooks library", () => {
  const bodies = [
    SPEC_BODY,
    "[]",
    '{"a":"é ☃ 𝄞"}',
    JSON.stringify({ nested: { list: [1, 2, 3] } }),
    JSON.stringify("x".repeat(10_000)),
  ];

  it("signs the reference vector exactly as the library does", async () => {
    const reference = new Webhook(SPEC_SECRET).sign(SPEC_ID, new Date(SPEC_TIMESTAMP * 1000), SPEC_BODY);
    expect(reference).toBe(SPEC_SIGNATURE);
    const ours = await signWebhook({
      secret: SPEC_SECRET,
      id: SPEC_ID,
      timestamp: SPEC_TIMESTAMP,
      body: SPEC_BODY,
    });
    expect(ours["webhook-signature"]).toBe(reference);
  });

  it("produces signatures the library verifies, and verifies the library's", async () => {
    const secret = newWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    for (const body of bodies) {
      const headers = await signWebhook({ secret, id: "msg_cross", timestamp: now, body });
      expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
      const signature = new Webhook(secret).sign("msg_cross", new Date(now * 1000), body);
      const verdict = await verifyWebhook({
        secret,
        headers: {
          "webhook-id": "msg_cross",
          "webhook-timestamp": String(now),
          "webhook-signature": signature,
        },
        body,
        now: Date.now(),
      });
      expect(verdict.ok, body.slice(0, 20)).toBe(true);
    }
  });

  it("agrees with the library that an altered body or another secret does not verify", async () => {
    const secret = newWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = await signWebhook({ secret, id: "msg_x", timestamp: now, body: SPEC_BODY });
    expect(() => new Webhook(secret).verify(`${SPEC_BODY} `, { ...headers })).toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(SPEC_BODY, { ...headers })).toThrow();
  });

  it("makes secrets of 32 random bytes behind whsec_", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhookSigningKey(secret)?.byteLength).toBe(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});
