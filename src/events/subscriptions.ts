// Which event types the tenant's endpoints subscribe to, as a thread object last heard it from its tenant's events
// object: an event no endpoint wants is not handed over (docs/decisions.md, "Events handed over only when someone
// listens").
import { z } from "zod";
import { EVENT_TYPES } from "../shared/webhooks-api";

/**
 * How long a thread trusts a subscription set it was given; the events object keeps pushing changes to the thread for
 * `SUBSCRIPTION_PUSH_MS`, longer than that, so a set is never trusted past the time changes reach it.
 */
export const SUBSCRIPTION_LEASE_MS = 5 * 60_000;
export const SUBSCRIPTION_PUSH_MS = 2 * SUBSCRIPTION_LEASE_MS;

/** What the events object answers with an accepted hand-over: the subscribed types as of change number `epoch`. */
export const subscriptionGrantSchema = z.object({
  types: z.array(z.enum(EVENT_TYPES)),
  epoch: z.number().int().min(0),
});
export type SubscriptionGrant = z.infer<typeof subscriptionGrantSchema>;

/**
 * The thread's copy. Unknown (never heard, expired, or invalidated by a change) means every event is wanted: the
 * thread then records and hands over as it always did, and the next accepted hand-over teaches it the set again.
 */
export class EventSubscriptions {
  #known: { types: ReadonlySet<string>; until: number } | null = null;
  /** The newest change the events object announced: a grant older than it is stale and ignored. */
  #epoch = 0;

  /** A grant, as the events object answered a hand-over sent at `askedAt` (the lease counts from the ask). */
  learn(grant: SubscriptionGrant, askedAt: number): void {
    if (grant.epoch < this.#epoch) return;
    this.#epoch = grant.epoch;
    this.#known = { types: new Set(grant.types), until: askedAt + SUBSCRIPTION_LEASE_MS };
  }

  /** The endpoints changed (change number `epoch`): forget the set until a newer grant. */
  changed(epoch: number): void {
    this.#epoch = Math.max(this.#epoch, epoch);
    this.#known = null;
  }

  /** False only when a fresh set is known and no endpoint in it subscribes to `type`. */
  wanted(type: string, now: number): boolean {
    const known = this.#known;
    if (known === null || now >= known.until) return true;
    return known.types.has(type);
  }
}

// One per thread object (its storage is the object's identity here), like the object's other in-memory state.
const copies = new WeakMap<DurableObjectStorage, EventSubscriptions>();

export function eventSubscriptionsOf(storage: DurableObjectStorage): EventSubscriptions {
  let copy = copies.get(storage);
  if (copy === undefined) {
    copy = new EventSubscriptions();
    copies.set(storage, copy);
  }
  return copy;
}
