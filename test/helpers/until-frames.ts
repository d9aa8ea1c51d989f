// Waiting on a thread socket for a condition over the frames seen so far, re-checked on each frame: no polling.
import type { FrameReader } from "./threads";

/** Resolves once `done()` holds; re-checked on every frame and on close, and fails after `timeoutMs`. */
export function untilFrames(reader: FrameReader, done: () => boolean, what: string, timeoutMs = 8_000) {
  return new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!done()) return;
      stop();
      resolve();
    };
    const timer = setTimeout(() => {
      stop();
      reject(
        new Error(`timed out waiting for ${what}; last frames ${JSON.stringify(reader.frames.slice(-5))}`),
      );
    }, timeoutMs);
    const stop = () => {
      clearTimeout(timer);
      reader.ws.removeEventListener("message", check);
      reader.ws.removeEventListener("close", check);
    };
    // Registered after the reader's own listeners, so its frames and `closed` are up to date when this runs.
    reader.ws.addEventListener("message", check);
    reader.ws.addEventListener("close", check);
    check();
  });
}
