// What survives a reload: thread id, visitor token, the last run's seq, whether the panel was open and the agent's
// accent — nothing else, never in a cookie.
import { type PersistMode, parseSaved, type Saved } from "./saved";

export { persistMode } from "./saved";

/** One agent's saved state in localStorage/sessionStorage, falling back to memory where storage is blocked. */
export class Store {
  #memory: Saved = {};
  readonly #backend: Storage | null;
  readonly #key: string;

  constructor(mode: PersistMode, scope: string) {
    this.#key = `agent-threads:${scope}`;
    let backend: Storage | null = null;
    try {
      backend = mode === "local" ? window.localStorage : mode === "session" ? window.sessionStorage : null;
      backend?.getItem(this.#key);
    } catch {
      backend = null; // sandboxed iframes and some private modes throw on access
    }
    this.#backend = backend;
    if (backend !== null) this.#memory = parseSaved(backend.getItem(this.#key));
  }

  get(): Saved {
    return { ...this.#memory };
  }

  set(patch: Partial<Record<keyof Saved, string | number | boolean | undefined>>): void {
    const next: Record<string, unknown> = { ...this.#memory, ...patch };
    for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
    this.#memory = parseSaved(JSON.stringify(next));
    try {
      this.#backend?.setItem(this.#key, JSON.stringify(this.#memory));
    } catch {
      // quota or a revoked permission: memory still holds it for this page
    }
  }

  /** Forgets the visitor and their thread; whether the panel was open and the agent's accent stay. */
  clear(): void {
    this.set({ threadId: undefined, visitorToken: undefined, runId: undefined, seq: undefined });
  }
}
