// Which runtime a caller reaches, decided by the thread itself: its binding (tenant, agent, environment), its owner
// (the subject) and its state (active, or an erasure tombstone), checked against verified claims; bound on first use.
import { ownerProofHolds } from "../../auth/owner-proof";
import { digestOf } from "../../control/canonical-json";
import type { DeploymentStore } from "../../control/deployment-store";
import { fail, ok, type Result, type RpcResult, refusal } from "../../errors";
import { findThread } from "../../storage/d1/thread-registry";
import {
  adoptThreadContext,
  readThreadContext,
  type ThreadContext,
  threadContextSchema,
} from "../../storage/thread/context-store";
import { readPin, type ThreadBinding } from "../../storage/thread/pin-store";
import { readOwner, readTombstone, writeOwner } from "../../storage/thread/thread-owner";
import { type PreviewPin, readThreadClaims, type ThreadClaims, threadAddressSchema } from "../contract";
import type { ThreadRuntime } from "../conversation";
import { bindPreview, bindThread, claimsMatch } from "./binding";
import { catchUpContext } from "./context-catch-up";

const unauthenticated = () => fail("unauthenticated", "Authentication required.");
const forbidden = () => fail("forbidden", "This thread belongs to another agent or tenant.");

export interface GateDeps {
  storage: DurableObjectStorage;
  /**
   * The registry, read only when a caller's claims show a context newer than the object's copy, and once for a thread
   * bound before threads recorded their owner.
   */
  db: D1Database;
  /** The secret a fresh launch's owner proof is made with (`DO_NAME_KEY`, src/auth/owner-proof.ts). */
  ownerProofKey: string;
  store: () => DeploymentStore;
  now: () => number;
  /**
   * The claims name a thread that was never launched (no owner, no pin, no tombstone, no registry row): only a
   * correctly signed token with crossed claims gets here. The object refuses and should leave nothing behind.
   */
  unknownThread: () => void;
  /** Creates the runtime of a binding; called once per object lifetime (and again after `forget`). */
  start: (binding: ThreadBinding) => ThreadRuntime;
}

export class ThreadGate {
  readonly #deps: GateDeps;
  #runtime: ThreadRuntime | null = null;

  constructor(deps: GateDeps) {
    this.#deps = deps;
  }

  /** The runtime of an already-bound thread, created from its stored pin; null before the first binding. */
  async stored(): Promise<ThreadRuntime | null> {
    if (this.#runtime !== null) {
      await this.#runtime.prepare();
      return this.#runtime;
    }
    const stored = await readPin(this.#deps.storage);
    if (!stored.ok || stored.binding === null) return null;
    const runtime = this.#install(stored.binding);
    await runtime.prepare();
    return runtime;
  }

  /**
   * Launch traffic: verified claims against the thread's own facts, before any read: an erased thread, another
   * subject's token → unauthenticated (as the edge answered when the registry decided); another tenant, agent or
   * environment → forbidden. An unbound thread binds now.
   */
  async admit(claims: unknown): Promise<Result<ThreadRuntime>> {
    const verified = readThreadClaims(claims);
    if (verified === null || readTombstone(this.#deps.storage) !== null) return unauthenticated();
    const runtime = await this.stored();
    if (runtime !== null && !claimsMatch(runtime.binding, verified)) return forbidden();
    const owned = await this.#owned(verified, runtime === null);
    if (!owned.ok) return owned;
    // Before binding: a first request that cannot get the launch's context and tool policy binds nothing.
    const caughtUp = await this.#catchUp(verified);
    if (!caughtUp.ok) return caughtUp;
    if (runtime !== null) return ok(runtime);
    const bound = await bindThread(this.#deps.storage, verified, this.#deps.store(), this.#deps.now);
    if (!bound.ok) return bound;
    const installed = this.#install(bound.value);
    await installed.prepare();
    return ok(installed);
  }

  /**
   * A new preview thread's owner, recorded before its first token is handed out. Idempotent for the same subject; an
   * erased thread or another owner → unauthenticated.
   */
  claim(claims: unknown): Result<null> {
    const verified = readThreadClaims(claims);
    const storage = this.#deps.storage;
    if (verified === null || readTombstone(storage) !== null) return unauthenticated();
    const owner = readOwner(storage);
    if (owner !== null) return owner.subject === verified.sub ? ok(null) : unauthenticated();
    writeOwner(storage, { subject: verified.sub, subjectKind: verified.subjectKind });
    return ok(null);
  }

  /**
   * A new preview thread (docs/api.md): its owner and its pin, the artifact the console previews, both before its first
   * token exists. Repeating the same claim and pin is a no-op.
   */
  async claimPreview(claims: unknown, pin: PreviewPin): Promise<Result<ThreadRuntime>> {
    // Checked again here, as every pin is on load.
    if ((await digestOf(pin.artifact)) !== pin.digest) {
      return fail("internal", "The previewed artifact failed its digest check.");
    }
    const verified = readThreadClaims(claims);
    if (verified === null) return unauthenticated();
    const claimed = this.claim(verified);
    if (!claimed.ok) return claimed;
    const bound = await bindPreview(this.#deps.storage, verified, pin, this.#deps.now());
    if (!bound.ok) return bound;
    const installed = this.#install(bound.value);
    await installed.prepare();
    return ok(installed);
  }

  /**
   * A launch resuming the thread: whether these claims may use it, without binding it. A preview thread is resumed
   * only through the preview route, never by a launch.
   */
  async vouch(claims: unknown): Promise<Result<{ context: ThreadContext; versionId: string | null }>> {
    const verified = readThreadClaims(claims);
    if (verified === null || readTombstone(this.#deps.storage) !== null) return unauthenticated();
    const runtime = await this.stored();
    if (runtime !== null && !claimsMatch(runtime.binding, verified)) return forbidden();
    if (runtime?.binding.preview !== undefined) return unauthenticated();
    const owned = await this.#owned(verified, runtime === null);
    if (!owned.ok) return owned;
    // The context copy the object holds, and the version of its current leaf: the pin until an upgrade (null before
    // the first bind); the launch's presentation is that version's.
    return ok({
      context: readThreadContext(this.#deps.storage),
      versionId: runtime === null ? null : runtime.current().versionId,
    });
  }

  /** The tenant admin API and jobs: the thread they name, never bound by them. */
  async addressed(address: unknown): Promise<RpcResult<ThreadRuntime | null>> {
    const parsed = threadAddressSchema.safeParse(address);
    if (!parsed.success) return refusal(unauthenticated());
    const runtime = await this.stored();
    return runtime === null || claimsMatch(runtime.binding, parsed.data) ? ok(runtime) : refusal(forbidden());
  }

  /**
   * A private launch's context: the thread's turns use it from the next one on. Kept even before the thread is bound,
   * and only when newer than the copy held, so a late delivery never undoes a later launch.
   */
  adoptContext(context: unknown): Result<null> {
    // Built by the Worker; parsed again because this is the object's own boundary.
    const parsed = threadContextSchema.safeParse(context);
    if (!parsed.success) return fail("bad_request", "The context is invalid.");
    adoptThreadContext(this.#deps.storage, parsed.data);
    return ok(null);
  }

  /** After erasure: the next caller starts from storage again. */
  forget(): void {
    this.#runtime = null;
  }

  /**
   * The claims' subject is the thread's owner. A thread not yet bound records it from the first claims that prove it
   * (the token of the launch that minted the thread, src/auth/owner-proof.ts); claims with a proof that fails are
   * refused without a read. A thread without either — resumed before its first connect, or launched before threads
   * recorded their owner — learns it once from the registry row (the launch's record of it), and never asks again.
   */
  async #owned(claims: ThreadClaims, unbound: boolean): Promise<Result<null>> {
    const storage = this.#deps.storage;
    const owner = readOwner(storage);
    if (owner !== null) return owner.subject === claims.sub ? ok(null) : unauthenticated();
    if (claims.ownerProof !== undefined) {
      if (!(await ownerProofHolds(this.#deps.ownerProofKey, claims, claims.ownerProof)))
        return unauthenticated();
      // Another request may have recorded an owner while this one computed the proof.
      const first = readOwner(storage);
      if (first !== null) return first.subject === claims.sub ? ok(null) : unauthenticated();
      if (unbound) {
        writeOwner(storage, { subject: claims.sub, subjectKind: claims.subjectKind });
        return ok(null);
      }
    }
    let row: Awaited<ReturnType<typeof findThread>>;
    try {
      row = await findThread(this.#deps.db, claims.tenantId, claims.threadId);
    } catch {
      return fail("upstream_unavailable", "The thread is briefly unavailable; try again.");
    }
    if (row === null) {
      // Bound yet unknown to the registry: refused, but the thread's storage is its own and stays.
      const pinned = await readPin(storage);
      if (pinned.ok && pinned.binding === null) this.#deps.unknownThread();
      return unauthenticated();
    }
    if (row.deletedAt !== null || row.subject === "") return unauthenticated();
    if (readOwner(storage) === null)
      writeOwner(storage, { subject: row.subject, subjectKind: row.subjectKind });
    return row.subject === claims.sub ? ok(null) : unauthenticated();
  }

  /** Only after the claims matched the binding and the owner: a refused caller makes the object read nothing. */
  #catchUp(claims: ThreadClaims): Promise<Result<null>> {
    return catchUpContext(this.#deps.storage, this.#deps.db, claims);
  }

  #install(binding: ThreadBinding): ThreadRuntime {
    // Another caller may have installed it while this one awaited the control plane.
    this.#runtime ??= this.#deps.start(binding);
    return this.#runtime;
  }
}
