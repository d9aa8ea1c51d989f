// Which runtime a caller reaches: the stored binding checked against verified claims or an address, bound on first use.
import type { DeploymentStore } from "../control/deployment-store";
import { fail, ok, type Result, type RpcResult, refusal } from "../errors";
import { readPin, type ThreadBinding } from "../storage/pin-store";
import { bindThread, claimsMatch } from "./binding";
import { readThreadClaims, type ThreadClaims, threadAddressSchema } from "./claims";
import { catchUpContext } from "./context-catch-up";
import type { ThreadRuntime } from "./thread-runtime";

const unauthenticated = () => fail("unauthenticated", "Authentication required.");
const forbidden = () => fail("forbidden", "This thread belongs to another agent or tenant.");

export interface GateDeps {
  storage: DurableObjectStorage;
  /** The registry, read when a caller's claims show a context newer than the object's copy. */
  db: D1Database;
  store: () => DeploymentStore;
  now: () => number;
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

  /** Launch traffic: verified claims against the stored binding, before any read; an unbound thread binds now. */
  async admit(claims: unknown): Promise<Result<ThreadRuntime>> {
    const verified = readThreadClaims(claims);
    if (verified === null) return unauthenticated();
    const runtime = await this.stored();
    if (runtime !== null) {
      if (!claimsMatch(runtime.binding, verified)) return forbidden();
      await this.#catchUp(verified);
      return ok(runtime);
    }
    const bound = await bindThread(this.#deps.storage, verified, this.#deps.store(), this.#deps.now);
    if (!bound.ok) return bound;
    await this.#catchUp(verified);
    const installed = this.#install(bound.value);
    await installed.prepare();
    return ok(installed);
  }

  /** The tenant admin API and jobs: the thread they name, never bound by them. */
  async addressed(address: unknown): Promise<RpcResult<ThreadRuntime | null>> {
    const parsed = threadAddressSchema.safeParse(address);
    if (!parsed.success) return refusal(unauthenticated());
    const runtime = await this.stored();
    return runtime === null || claimsMatch(runtime.binding, parsed.data) ? ok(runtime) : refusal(forbidden());
  }

  /** After erasure: the next caller starts from storage again. */
  forget(): void {
    this.#runtime = null;
  }

  /** Only after the claims matched the binding: a refused caller makes the object read nothing. */
  #catchUp(claims: ThreadClaims): Promise<void> {
    return catchUpContext(this.#deps.storage, this.#deps.db, claims);
  }

  #install(binding: ThreadBinding): ThreadRuntime {
    // Another caller may have installed it while this one awaited the control plane.
    this.#runtime ??= this.#deps.start(binding);
    return this.#runtime;
  }
}
