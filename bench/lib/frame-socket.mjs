// A WebSocket that parses JSON frames, stamps each with its arrival time, and runs one timed turn at a time.

const TERMINAL = new Set(["succeeded", "failed", "aborted"]);

export class FrameSocket {
  #ws;
  #listener = null;

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

  /** Opens a socket (Node's WebSocket; headers such as Origin are sent as a browser would). */
  static open(url, { protocols = [], headers = {}, timeoutMs = 15_000 } = {}) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { protocols, headers });
      const socket = new FrameSocket(ws);
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

  send(frame) {
    this.#ws.send(JSON.stringify(frame));
  }

  close() {
    try {
      this.#ws.close(1000);
    } catch {}
  }

  /** Resolves with `{frame, at}` for the first frame matching `predicate`. */
  waitFor(predicate, timeoutMs = 15_000, what = "frame") {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#listener = null;
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#listener = (frame, at) => {
        if (frame.type === "error") {
          clearTimeout(timer);
          this.#listener = null;
          reject(new Error(`error frame: ${frame.code} ${frame.message}`));
          return;
        }
        if (!predicate(frame)) return;
        clearTimeout(timer);
        this.#listener = null;
        resolve({ frame, at });
      };
    });
  }

  /**
   * Sends `frame` and follows the run it starts: the first `run` frame names it, its deltas are counted by seq, and
   * its terminal `run` frame ends the turn. Returns times from the send (ms) and seq gaps and duplicates.
   */
  turn(frame, expectedDeltas, timeoutMs = 30_000) {
    return new Promise((resolve, reject) => {
      let runId = null;
      let firstDeltaMs = null;
      let replyEntryId = null;
      const seqs = new Map();
      const timer = setTimeout(() => {
        this.#listener = null;
        reject(new Error(`turn did not end within ${timeoutMs} ms`));
      }, timeoutMs);
      const t0 = performance.now();
      this.#listener = (f, at) => {
        if (f.type === "error") {
          clearTimeout(timer);
          this.#listener = null;
          reject(new Error(`error frame: ${f.code} ${f.message}`));
          return;
        }
        if (f.type === "run" && runId === null) runId = f.runId;
        if (f.type === "entry" && f.entry?.role === "assistant" && f.entry.runId === runId)
          replyEntryId = f.entry.id;
        if (f.type === "delta" && f.runId === runId) {
          firstDeltaMs ??= at - t0;
          seqs.set(f.seq, (seqs.get(f.seq) ?? 0) + 1);
        }
        if (f.type === "run" && f.runId === runId && TERMINAL.has(f.status)) {
          clearTimeout(timer);
          this.#listener = null;
          let lost = 0;
          let duplicated = 0;
          const top = Math.max(expectedDeltas, ...seqs.keys());
          for (let s = 1; s <= top; s += 1) if (!seqs.has(s)) lost += 1;
          for (const n of seqs.values()) duplicated += n - 1;
          resolve({
            status: f.status,
            firstDeltaMs,
            endMs: at - t0,
            endAt: at,
            lost,
            duplicated,
            replyEntryId,
          });
        }
      };
      this.send(frame);
    });
  }
}
