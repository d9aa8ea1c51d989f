// A bounded set of keys that each expire: isolate memory for short-lived answers, never growing past its size.

export class ExpiringSet {
  readonly #expiresAt = new Map<string, number>();

  constructor(readonly maxSize: number) {}

  /** True while `key` was added with an expiry after `now`. */
  has(key: string, now: number): boolean {
    const expiresAt = this.#expiresAt.get(key);
    if (expiresAt === undefined) return false;
    if (expiresAt > now) return true;
    this.#expiresAt.delete(key);
    return false;
  }

  /** Adds `key` until `expiresAt`; when full, the oldest addition goes first. */
  add(key: string, expiresAt: number): void {
    this.#expiresAt.delete(key);
    if (this.#expiresAt.size >= this.maxSize) {
      const oldest = this.#expiresAt.keys().next();
      if (!oldest.done) this.#expiresAt.delete(oldest.value);
    }
    this.#expiresAt.set(key, expiresAt);
  }

  clear(): void {
    this.#expiresAt.clear();
  }

  get size(): number {
    return this.#expiresAt.size;
  }
}
