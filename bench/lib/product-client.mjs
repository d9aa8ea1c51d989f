// The product's client side as the widget drives it: launch a thread, open its socket, say hello, read `ready`.
import { launchPublic } from "agent-threads/client";
import { FrameSocket } from "./frame-socket.mjs";

let addressCounter = 0;

/** A distinct loopback client address per launch, sent in the header the edge sets, so the per-(key, IP) launch
 * limiter sees many visitors rather than one: the bench measures the launch path, not the limiter's refusals. */
export function nextClientAddress() {
  addressCounter += 1;
  const i = addressCounter;
  return `127.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
}

/** A browser-style launch from the agent's origin; a refusal throws AgentThreadsError (`status`, `code`). */
export function launch(baseUrl, agent) {
  return launchPublic({
    baseUrl,
    agentKey: agent.publicKey,
    origin: agent.origin,
    headers: { "CF-Connecting-IP": nextClientAddress() },
  });
}

/** Opens the thread's socket and waits for `ready`; returns the socket and the ms from open() to `ready`. */
export async function connect(session, agent) {
  const t0 = performance.now();
  const socket = await FrameSocket.open(session.websocketUrl, {
    protocols: ["agent.v1", `bearer.${session.token}`],
    headers: { Origin: agent.origin },
  });
  const ready = socket.waitFor((f) => f.type === "ready", 30_000, "ready frame");
  socket.send({ type: "hello", protocol: 1 });
  const { at } = await ready;
  return { socket, readyMs: at - t0 };
}

let messageCounter = 0;

export function sendFrame(text) {
  messageCounter += 1;
  return { type: "send", clientMessageId: `bench_${process.pid}_${messageCounter}`, text };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next;
      next += 1;
      results[i] = await fn(items[i], i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
