// The thread's events, handed to its tenant's events object (docs/webhooks.md): at least once, oldest first, retried
// with backoff; a preview thread's are dropped, and under zero retention no free text leaves the thread. Events of a
// type no endpoint subscribes to are not handed over while the thread knows the tenant's set (docs/decisions.md,
// "Events handed over only when someone listens").
import { zeroRetentionIdleMinutes } from "../../control/artifact";
import { eventSubscriptionsOf, subscriptionGrantSchema } from "../../events/subscriptions";
import { eventBody, MAX_EVENTS_PER_ACCEPT, tenantEvents } from "../../events/tenant-events";
import { backoffMs } from "../../storage/projection/projection-drain";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { markEventsForwarded, unforwardedThreadEvents } from "../../storage/thread/thread-events";
import { deleteMeta, readMetaInteger, writeMeta } from "../../storage/thread/thread-meta";

const FORWARD_FAILURES_KEY = "events_forward_failures";

/** Zero retention: an event's free text (a feedback comment, a handoff reason) never leaves the thread. */
function withoutText(data: Record<string, unknown>): Record<string, unknown> {
  const { comment: _comment, reason: _reason, ...rest } = data;
  return rest;
}

export interface EventForwardingDeps {
  storage: DurableObjectStorage;
  env: Env;
  now: () => number;
  /** Arms the object's `forwardEvents` callback in `seconds` (idempotent). */
  retryIn: (seconds: number) => Promise<void>;
}

/** Per thread object: whether a hand-over is running, and whether someone asked for another while it ran. */
const inFlight = new WeakMap<DurableObjectStorage, { again: boolean }>();

/**
 * Sends the events not yet acknowledged, oldest first, and forgets them only once the tenant's events object has
 * stored them (at least once: a lost answer re-sends, and that object ignores ids it holds). On failure it retries
 * with backoff.
 *
 * One hand-over at a time per thread: a call while one runs only asks it to read once more before it ends, and returns.
 * Two in flight would lose events: an acknowledgement deletes run events above the watermark, a new event may then take
 * a freed seq, and the other hand-over's acknowledgement — up to the seq it read — would cover that event unsent. The
 * call does not wait for the running one either: that one may be held until the caller's own critical section (the
 * object's start) ends.
 */
export async function forwardThreadEvents(deps: EventForwardingDeps, binding: ThreadBinding): Promise<void> {
  const running = inFlight.get(deps.storage);
  if (running !== undefined) {
    running.again = true;
    return;
  }
  const slot = { again: false };
  inFlight.set(deps.storage, slot);
  try {
    do {
      slot.again = false;
      await forwardPending(deps, binding);
    } while (slot.again);
  } finally {
    inFlight.delete(deps.storage);
  }
}

async function forwardPending(deps: EventForwardingDeps, binding: ThreadBinding): Promise<void> {
  const { storage } = deps;
  const subscriptions = eventSubscriptionsOf(storage);
  const listener = {
    tenantId: binding.tenantId,
    environment: binding.environment,
    agentId: binding.agentId,
    threadId: binding.threadId,
  };
  for (;;) {
    const events = unforwardedThreadEvents(storage, MAX_EVENTS_PER_ACCEPT);
    const last = events.at(-1);
    if (last === undefined) return;
    // A preview thread is the console's, not a session of the tenant's product: its backend hears nothing of it.
    if (binding.preview !== undefined) {
      markEventsForwarded(storage, last.seq, deps.now());
      continue;
    }
    // No endpoint wants them (as of a set the events object would have told us had changed): nothing to hand over.
    const askedAt = deps.now();
    const wanted = events.filter((event) => subscriptions.wanted(event.type, askedAt));
    if (wanted.length === 0) {
      markEventsForwarded(storage, last.seq, askedAt);
      continue;
    }
    const zero = zeroRetentionIdleMinutes(binding.artifact) !== null;
    const bodies = wanted.map((event) =>
      eventBody({
        ...event,
        tenantId: binding.tenantId,
        data:
          typeof event.data === "object" && event.data !== null && !Array.isArray(event.data)
            ? zero
              ? withoutText(event.data)
              : event.data
            : {},
      }),
    );
    let accepted = false;
    try {
      const answer = await tenantEvents(deps.env, binding.tenantId).accept(
        binding.tenantId,
        bodies,
        listener,
      );
      accepted = answer.ok;
      const grant = answer.ok ? subscriptionGrantSchema.safeParse(answer.value.subscriptions) : null;
      if (grant?.success) subscriptions.learn(grant.data, askedAt);
    } catch (error) {
      console.warn(
        JSON.stringify({ msg: "events not forwarded", threadId: binding.threadId, error: String(error) }),
      );
    }
    if (!accepted) {
      const failures = (readMetaInteger(storage, FORWARD_FAILURES_KEY) ?? 0) + 1;
      writeMeta(storage, FORWARD_FAILURES_KEY, String(failures));
      await deps.retryIn(Math.max(1, Math.ceil(backoffMs(failures) / 1000)));
      return;
    }
    markEventsForwarded(storage, last.seq, deps.now());
    deleteMeta(storage, FORWARD_FAILURES_KEY);
  }
}
