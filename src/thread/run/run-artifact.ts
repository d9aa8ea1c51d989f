// The artifact a turn runs on (docs/api.md): the pin, or the version a `version_change` above the turn moved it to.
import type { Artifact } from "../../control/artifact";
import { fail, ok, type Result } from "../../errors";
import type { Entry } from "../../storage/thread/entry-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import {
  readThreadVersion,
  storedThreadVersions,
  type ThreadVersion,
} from "../../storage/thread/thread-versions";
import { DEFAULT_CONTEXT_TOKENS } from "./thread-limits";

const tampered = () => fail("internal", "The thread's agent version failed its digest check.");

/**
 * The thread's verified bindings by version number: the pin, and every version the thread was upgraded to, each
 * re-verified against its digest once per object lifetime (like the pin), so a turn resolves its binding without
 * waiting.
 */
export class VersionBindings {
  readonly #storage: DurableObjectStorage;
  readonly #pin: ThreadBinding;
  readonly #verified = new Map<number, ThreadBinding>();
  readonly #tampered = new Set<number>();
  /** The stored digests of versions whose artifact failed its check: a run recorded on one cannot be verified. */
  readonly #tamperedDigests = new Set<string>();
  #loading: Promise<void> | null = null;
  /** True once every stored upgrade target has been read (`load` settled). */
  #loaded = false;

  constructor(storage: DurableObjectStorage, pin: ThreadBinding) {
    this.#storage = storage;
    this.#pin = pin;
  }

  get pin(): ThreadBinding {
    return this.#pin;
  }

  /** Reads and verifies every stored upgrade target (once; the thread holds a handful at most). */
  load(): Promise<void> {
    this.#loading ??= this.#read();
    return this.#loading;
  }

  async #read(): Promise<void> {
    for (const { version, digest } of storedThreadVersions(this.#storage)) {
      if (this.#verified.has(version)) continue;
      const read = await readThreadVersion(this.#storage, version);
      if (!read.ok) {
        this.#tampered.add(version);
        this.#tamperedDigests.add(digest);
      } else if (read.version !== null) this.add(read.version);
    }
    this.#loaded = true;
  }

  /**
   * The pin when it is the only binding any entry can name (the thread was never upgraded, its stored versions read),
   * so a caller needs no entry to know a turn's binding; null otherwise.
   */
  sole(): ThreadBinding | null {
    return this.#loaded && this.#verified.size === 0 && this.#tampered.size === 0 ? this.#pin : null;
  }

  /** A version just verified and stored by an upgrade. */
  add(version: ThreadVersion): void {
    this.#tampered.delete(version.version);
    this.#verified.set(version.version, {
      ...this.#pin,
      versionId: version.versionId,
      version: version.version,
      digest: version.digest,
      artifact: version.artifact,
    });
  }

  /** The verified binding whose artifact has `digest`, or null. */
  byDigest(digest: string): ThreadBinding | null {
    if (this.#pin.digest === digest) return this.#pin;
    for (const [version, binding] of this.#verified) {
      if (binding.digest === digest && !this.#tampered.has(version)) return binding;
    }
    return null;
  }

  /** True when `digest` names a stored version whose artifact failed its digest check. */
  failedCheck(digest: string): boolean {
    return this.#tamperedDigests.has(digest);
  }

  /** The binding of an entry's `agentVersion` (null or the pin's number: the pin). */
  at(agentVersion: number | null): Result<ThreadBinding> {
    if (agentVersion === null || agentVersion === this.#pin.version) return ok(this.#pin);
    const binding = this.#verified.get(agentVersion);
    return binding === undefined || this.#tampered.has(agentVersion) ? tampered() : ok(binding);
  }
}

/**
 * THE artifact a run runs on: the binding in effect at `at` — the turn's user message, or (before it is stored) the
 * entry it goes below; null (a new root) is the pin. Every version-dependent part of a turn (instructions, model,
 * tools, limits, the run's recorded version) comes from this one answer.
 */
export function runArtifact(versions: VersionBindings, at: Entry | null): Result<ThreadBinding> {
  return versions.at(at?.agentVersion ?? null);
}

/**
 * The artifact a stored run ran on, by the digest its audit record holds: the pin or a version the thread was
 * upgraded to (each re-verified against its digest when loaded). A stored version whose artifact no longer hashes to
 * its digest is an error, never a stand-in; a digest the thread does not hold is not found.
 */
export async function artifactOfRun(
  versions: VersionBindings,
  digest: string,
): Promise<Result<ThreadBinding>> {
  await versions.load();
  const found = versions.byDigest(digest);
  if (found !== null) return ok(found);
  if (versions.failedCheck(digest)) {
    return fail(
      "internal",
      "The agent version this run ran on failed its digest check: its input cannot be verified.",
    );
  }
  return fail("not_found", "The agent version this run ran on is not available to this thread.");
}

/** The prompt budget of runs on `artifact`. */
export function contextBudget(artifact: Artifact): number {
  return artifact.limits?.maxContextTokens ?? DEFAULT_CONTEXT_TOKENS;
}
