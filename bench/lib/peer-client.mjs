// The peer baseline's client side, as the SDK's chat client (`agents/chat`'s WebSocketChatTransport) speaks to
// `AIChatAgent`: each turn sends the whole conversation in a `cf_agent_use_chat_request` and reads
// `cf_agent_use_chat_response` frames (AI SDK UI message chunks) to `done`; `error: true` carries the error text.

let counter = 0;
const nextId = (prefix) => {
  counter += 1;
  return `${prefix}_${process.pid}_${counter}`;
};

export class PeerSocket {
  #ws;
  #listener = null;
  /** The conversation as the client holds it (UI messages), sent whole with every request. */
  #messages = [];
  #chatId = nextId("chat");

  constructor(ws) {
    this.#ws = ws;
    ws.addEventListener("message", (event) => {
      const at = performance.now();
      let frame;
      try {
        frame = JSON.parse(String(event.data));
      } catch {
        return;
      }
      this.#listener?.(frame, at);
    });
  }

  static open(url, { timeoutMs = 15_000 } = {}) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const socket = new PeerSocket(ws);
      const timer = setTimeout(() => {
        ws.close();
        reject(new Error(`opening ${url} timed out`));
      }, timeoutMs);
      ws.addEventListener("open", () => {
        clearTimeout(timer);
        resolve(socket);
      });
      ws.addEventListener("error", (event) => {
        clearTimeout(timer);
        reject(new Error(`WebSocket error on ${url}: ${event.message ?? "refused"}`));
      });
    });
  }

  close() {
    try {
      this.#ws.close(1000);
    } catch {}
  }

  /** One turn: the user's message appended and sent; times from the send to the first text delta and to `done`. */
  turn(text, expectedDeltas, timeoutMs = 30_000) {
    const requestId = nextId("req");
    this.#messages.push({ id: nextId("msg"), role: "user", parts: [{ type: "text", text }] });
    return new Promise((resolve, reject) => {
      let firstDeltaMs = null;
      let deltas = 0;
      let reply = "";
      let messageId = nextId("msg");
      const timer = setTimeout(() => {
        this.#listener = null;
        reject(new Error(`peer turn did not end within ${timeoutMs} ms`));
      }, timeoutMs);
      const t0 = performance.now();
      this.#listener = (frame, at) => {
        if (frame.type !== "cf_agent_use_chat_response" || frame.id !== requestId) return;
        if (frame.error) {
          clearTimeout(timer);
          this.#listener = null;
          reject(new Error(`peer error: ${frame.body || "stream error"}`));
          return;
        }
        // A frame may carry a chunk and `done` together: the chunk counts before the turn ends.
        if (frame.body?.trim()) {
          const chunk = JSON.parse(frame.body);
          if (chunk.type === "start" && typeof chunk.messageId === "string") messageId = chunk.messageId;
          if (chunk.type === "text-delta") {
            firstDeltaMs ??= at - t0;
            deltas += 1;
            reply += chunk.delta;
          }
          if (chunk.type === "error") {
            clearTimeout(timer);
            this.#listener = null;
            reject(new Error(`peer error chunk: ${chunk.errorText}`));
            return;
          }
        }
        if (!frame.done) return;
        clearTimeout(timer);
        this.#listener = null;
        this.#messages.push({ id: messageId, role: "assistant", parts: [{ type: "text", text: reply }] });
        resolve({
          status: deltas > 0 ? "succeeded" : "failed",
          firstDeltaMs,
          endMs: at - t0,
          endAt: at,
          lost: Math.max(0, expectedDeltas - deltas),
          duplicated: Math.max(0, deltas - expectedDeltas),
        });
      };
      this.#ws.send(
        JSON.stringify({
          type: "cf_agent_use_chat_request",
          id: requestId,
          init: {
            method: "POST",
            body: JSON.stringify({ id: this.#chatId, messages: this.#messages, trigger: "submit-message" }),
          },
        }),
      );
    });
  }
}
