// A thread hands its events to the tenant's events object only when an endpoint subscribes to them, and an endpoint
// created through the API hears every event that happens after its creation answered (docs/webhooks.md).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tenantEvents } from "../../src/events/tenant-events";
import { webhookWithSecretResponse } from "../../src/shared/webhooks-api";
import { projectionBacklog } from "../../src/storage/projection/outbox";
import { unforwardedEventCount } from "../../src/storage/thread/thread-events";
import { fakeReceiver, verified } from "../helpers/fake-receiver";
import { threadStub } from "../helpers/projection";
import { api, json } from "../helpers/tenants";
import { inTestEvents } from "../helpers/test-tenant-events";
import { clientMessageId, type LiveAgent, launch, liveAgent, ORIGIN } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const replySchema = z.object({ run: z.object({ id: z.string(), status: z.string() }) });

/** One thread of `agent`, and a turn on it over HTTP that answers once the thread has drained and handed over. */
async function thread(agent: LiveAgent) {
  const session = await launch(agent.publicKey);
  const stub = await threadStub(agent, session.threadId);
  const turn = async (text: string) => {
    const res = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { clientMessageId: clientMessageId(), text },
    });
    const reply = await json(res, 201, replySchema);
    await waitFor(
      () =>
        runInDurableObject(
          stub,
          (_i, state) => projectionBacklog(state.storage) + unforwardedEventCount(state.storage),
        ),
      (left) => left === 0,
      { what: "the turn's projection and event hand-over" },
    );
    return reply.run;
  };
  const rows = () =>
    runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec("SELECT type FROM thread_events ORDER BY seq")
        .toArray()
        .map((r) => String(r.type)),
    );
  return { threadId: session.threadId, turn, rows };
}

const accepts = (agent: LiveAgent) =>
  inTestEvents(tenantEvents(env, agent.tenantId), (instance) => instance.accepts);

describe("events handed over only when someone listens", () => {
  it("with no endpoint, a steady turn makes no call to the events object and records no run event", async () => {
    const agent = await liveAgent();
    const t = await thread(agent);
    // The first turns teach the thread its tenant's subscriptions (the events object answers them with a hand-over).
    await t.turn("first");
    await t.turn("second");
    const before = await accepts(agent);

    const run = await t.turn("third");
    expect(run.status).toBe("succeeded");
    expect(await accepts(agent)).toBe(before);
    expect(await t.rows()).not.toContain("run.succeeded");
  });

  it("an endpoint created through the API receives the run event of the next turn", async () => {
    const agent = await liveAgent();
    const t = await thread(agent);
    await t.turn("first");
    await t.turn("second");
    const quiet = await accepts(agent);
    await t.turn("third");
    expect(await accepts(agent)).toBe(quiet);

    const receiver = fakeReceiver(200);
    const hook = await json(
      await api("/v1/webhooks", {
        method: "POST",
        key: agent.apiKey,
        body: { url: receiver.url, events: ["run.succeeded"] },
      }),
      201,
      webhookWithSecretResponse,
    );
    const run = await t.turn("after the endpoint");

    const delivered = await waitFor(
      () => receiver.received.filter((r) => r.answered === 200),
      (list) => list.length >= 1,
      { what: "the run event delivered" },
    );
    expect(delivered.map((r) => verified(hook.secret, r))).toEqual([
      expect.objectContaining({
        type: "run.succeeded",
        data: expect.objectContaining({ threadId: t.threadId, runId: run.id }),
      }),
    ]);
  });

  it("stops handing run events over once the last endpoint subscribing to them is deleted", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(200);
    const hook = await json(
      await api("/v1/webhooks", {
        method: "POST",
        key: agent.apiKey,
        body: { url: receiver.url, events: ["run.succeeded"] },
      }),
      201,
      webhookWithSecretResponse,
    );
    const t = await thread(agent);
    await t.turn("first");
    await waitFor(
      () => receiver.received.length,
      (n) => n === 1,
      { what: "the first run event" },
    );
    expect((await api(`/v1/webhooks/${hook.id}`, { method: "DELETE", key: agent.apiKey })).status).toBe(204);
    // The next hand-over teaches the thread the empty set; after it nothing goes.
    await t.turn("second");
    const before = await accepts(agent);
    await t.turn("third");
    expect(await accepts(agent)).toBe(before);
    expect(receiver.received).toHaveLength(1);
  });
});
