// When the widget reconnects: never after a terminal 44xx close, always after transient ones, with jittered backoff.
import { describe, expect, it } from "vitest";
import { ERROR_CODES, WS_CLOSE_CODE, WS_CLOSE_IDLE } from "../../src/shared/errors";
import { backoffDelay, closeAction, rateLimitedDelay } from "../../src/widget/backoff";

describe("closeAction", () => {
  it("reconnects after transient closes", () => {
    for (const code of [1000, 1001, 1005, 1006, 1009, 1011, 1012, 1013, 1015, 3000, 4000, 4999]) {
      expect(closeAction(code), String(code)).toBe("reconnect");
    }
  });

  it("gets a fresh token after 4401, waits for activity after 4408, slows down after 4429", () => {
    expect(closeAction(4401)).toBe("relaunch");
    expect(closeAction(WS_CLOSE_IDLE)).toBe("idle");
    expect(closeAction(4429)).toBe("rate_limited");
  });

  it("stops for good after every other 44xx", () => {
    for (const code of [4400, 4403, 4404, 4409, 4413, 4499])
      expect(closeAction(code), String(code)).toBe("stop");
  });

  it("covers every close code the server sends", () => {
    const expected: Record<number, string> = {
      4400: "stop",
      4401: "relaunch",
      4403: "stop",
      4404: "stop",
      4409: "stop",
      4429: "rate_limited",
      1009: "reconnect",
      1011: "reconnect",
      1013: "reconnect",
    };
    for (const code of ERROR_CODES) {
      const close = WS_CLOSE_CODE[code];
      if (close !== null) expect(closeAction(close), code).toBe(expected[close]);
    }
  });
});

describe("backoffDelay", () => {
  it("doubles from 250–500 ms up to a 15–30 s cap, with jitter inside each step", () => {
    expect(backoffDelay(0, () => 0)).toBe(250);
    expect(backoffDelay(0, () => 1)).toBe(500);
    expect(backoffDelay(1, () => 1)).toBe(1000);
    expect(backoffDelay(3, () => 0.5)).toBe(3000);
    expect(backoffDelay(6, () => 1)).toBe(30_000);
    expect(backoffDelay(50, () => 0)).toBe(15_000);
    expect(backoffDelay(1e9, () => 1)).toBe(30_000);
    for (let attempt = 0; attempt < 12; attempt++) {
      const d = backoffDelay(attempt);
      expect(d).toBeGreaterThanOrEqual(backoffDelay(attempt, () => 0));
      expect(d).toBeLessThanOrEqual(backoffDelay(attempt, () => 1));
    }
  });

  it("spreads many clients out rather than reconnecting in lockstep", () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(4)));
    expect(delays.size).toBeGreaterThan(10);
  });
});

describe("rateLimitedDelay", () => {
  it("waits at least 5 s, at least what Retry-After asked, and at most 5 minutes for it", () => {
    expect(rateLimitedDelay(0, undefined, () => 0)).toBe(5000);
    expect(rateLimitedDelay(0, 20, () => 0)).toBe(20_000);
    expect(rateLimitedDelay(0, 1e9, () => 0)).toBe(300_000);
    expect(rateLimitedDelay(10, undefined, () => 1)).toBe(30_000);
  });
});
