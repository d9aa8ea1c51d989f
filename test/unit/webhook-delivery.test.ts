// One delivery attempt and the retry schedule: what counts as delivered, retried or failed, and how long retries last.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { attemptDelivery, classifyStatus, RETRY_DELAYS_MS, retryDelays } from "../../src/events/deliver";
import { newWebhookSecret } from "../../src/tools/webhook-signature";
import { fakeToolServer, never } from "../helpers/fake-tool-server";

describe("the retry schedule", () => {
  it("retries for at least 24 hours, each wait longer or equal to the one before", () => {
    const total = RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0);
    expect(total).toBeGreaterThanOrEqual(24 * 3_600_000);
    RETRY_DELAYS_MS.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i - 1] ?? 0);
    });
  });

  it("delivers on 2xx, retries 408, 429 and 5xx, fails every other status", () => {
    for (const status of [200, 201, 204, 299])
      expect(classifyStatus(status), String(status)).toBe("succeeded");
    for (const status of [408, 429, 500, 502, 503, 599])
      expect(classifyStatus(status), String(status)).toBe("retry");
    for (const status of [301, 302, 400, 401, 403, 404, 410, 413, 422]) {
      expect(classifyStatus(status), String(status)).toBe("failed");
    }
  });
});

describe("attemptDelivery", () => {
  const base = {
    url: "https://hooks.example.com/x",
    eventId: "evt_1",
    body: '{"id":"evt_1"}',
    now: Date.now(),
  };

  it("posts the exact body with Standard Webhooks headers, never following a redirect", async () => {
    const secret = newWebhookSecret();
    const server = fakeToolServer(
      () => new Response(null, { status: 302, headers: { location: "https://x.test" } }),
    );
    expect(await attemptDelivery({ ...base, secret, fetch: server.fetch })).toEqual({
      outcome: "failed",
      statusCode: 302,
    });
    const sent = server.sent[0];
    expect(sent?.redirect).toBe("manual");
    expect(sent?.headers.get("content-type")).toBe("application/json");
    expect(new Webhook(secret).verify(sent?.body ?? "", Object.fromEntries(sent?.headers ?? []))).toEqual({
      id: "evt_1",
    });
    expect(sent?.headers.get("webhook-id")).toBe("evt_1");
  });

  it("retries a network error and a receiver that does not answer in time", async () => {
    const secret = newWebhookSecret();
    const failing: typeof fetch = async () => {
      throw new TypeError("Network connection lost.");
    };
    expect(await attemptDelivery({ ...base, secret, fetch: failing })).toEqual({
      outcome: "retry",
      statusCode: null,
    });
    const slow = fakeToolServer(never);
    expect(await attemptDelivery({ ...base, secret, fetch: slow.fetch, timeoutMs: 20 })).toEqual({
      outcome: "retry",
      statusCode: null,
    });
    expect(slow.sent[0]?.signal?.aborted).toBe(true);
  });
});

describe("retryDelays", () => {
  it("uses WEBHOOK_RETRY_DELAYS_MS only in development, and the production schedule otherwise", () => {
    const fast = "1000,2000,4000";
    expect(retryDelays({ ENVIRONMENT: "development", WEBHOOK_RETRY_DELAYS_MS: fast })).toEqual([
      1000, 2000, 4000,
    ]);
    for (const ENVIRONMENT of ["staging", "production"]) {
      expect(retryDelays({ ENVIRONMENT, WEBHOOK_RETRY_DELAYS_MS: fast })).toBe(RETRY_DELAYS_MS);
    }
    for (const bad of ["", "1000,x", "0", "-5,10"]) {
      expect(retryDelays({ ENVIRONMENT: "development", WEBHOOK_RETRY_DELAYS_MS: bad }), bad).toBe(
        RETRY_DELAYS_MS,
      );
    }
  });
});
