// Holds the object in memory only for a turn that runs long: most turns end before the heartbeat would matter.
import type { ThreadSettings } from "./thread-settings";

/** `keepAliveWhile`, armed only for a turn still running after `settings.keepAliveAfterMs`. */
export function keepAliveIfLong(
  keepAlive: () => Promise<() => void>,
  settings: Pick<ThreadSettings, "after" | "keepAliveAfterMs">,
): <T>(fn: () => Promise<T>) => Promise<T> {
  return async (fn) => {
    let settled = false;
    let dispose: (() => void) | null = null;
    const cancel = settings.after(settings.keepAliveAfterMs, () => {
      void keepAlive().then((release) => {
        if (settled) release();
        else dispose = release;
      });
    });
    try {
      return await fn();
    } finally {
      settled = true;
      cancel();
      (dispose as (() => void) | null)?.();
    }
  };
}
