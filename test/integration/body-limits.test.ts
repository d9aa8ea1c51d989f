// Request bodies are limited as they stream in: a chunked body with no Content-Length is refused without being read
// whole, on the launch endpoint and on a thread's messages alike.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { API, expectError } from "../helpers/tenants";
import { launch, liveAgent, ORIGIN } from "../helpers/threads";

const CHUNK = 16 * 1024;
const TOTAL = 8 * 1024 * 1024;

/** A JSON-looking body of `TOTAL` bytes produced on demand, counting how much of it was pulled. */
function endlessBody() {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= TOTAL) {
        controller.close();
        return;
      }
      pulled += CHUNK;
      controller.enqueue(
        new TextEncoder().encode(pulled === CHUNK ? `{"x":"${"a".repeat(CHUNK - 6)}` : "a".repeat(CHUNK)),
      );
    },
  });
  return { stream, pulled: () => pulled };
}

function post(path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  return exports.default.fetch(
    new Request(`${API}${path}`, {
      method: "POST",
      body,
      headers: { "Content-Type": "application/json", Origin: ORIGIN, ...headers },
      // @ts-expect-error: workerd's RequestInit accepts the standard streaming flag.
      duplex: "half",
    }),
  );
}

describe("streamed body limits", () => {
  it("refuses an oversized chunked launch body with 413 after reading little more than the limit", async () => {
    const body = endlessBody();
    const res = await post("/v1/agent-sessions", body.stream, { "CF-Connecting-IP": "198.51.100.77" });
    await expectError(res, 413, "payload_too_large");
    expect(body.pulled()).toBeLessThan(TOTAL / 8);
  });

  it("refuses an oversized chunked thread message with 413 after reading little more than the limit", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const body = endlessBody();
    const res = await post(`/v1/threads/${session.threadId}/messages`, body.stream, {
      Authorization: `Bearer ${session.token}`,
    });
    await expectError(res, 413, "payload_too_large");
    expect(body.pulled()).toBeLessThan(TOTAL / 8);
  });
});
