// Waits until a freshly started server answers GET /v1/health, so seeding never races the boot.
import { request } from "./http-client.mjs";

/**
 * Polls `${baseUrl}/v1/health` until it answers 200 and returns its body. `stillRunning()` lets the caller give up
 * early when the server process has already exited.
 */
export async function waitForHealth(baseUrl, { timeoutMs = 120_000, intervalMs = 300, stillRunning } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (stillRunning && !stillRunning())
      throw new Error("the server process exited before it became healthy.");
    try {
      const res = await request(baseUrl, "GET", "/v1/health", { timeoutMs: 5_000 });
      if (res.status === 200) return res.body;
      last = `HTTP ${res.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`${baseUrl}/v1/health did not answer 200 within ${timeoutMs / 1000} s (last: ${last}).`);
}
