// A run's wall-clock limit (`limits.runTimeoutMs`): a run past it ends failed with reason "timeout", for the socket,
// the HTTP API and the run.failed webhook, keeping the text streamed so far.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { webhookWithSecretResponse } from "../../src/shared/webhooks-api";
import { fakeReceiver, verified } from "../helpers/fake-receiver";
import { api, json } from "../helpers/tenants";
import { clientMessageId, connect, type Launch, launch, liveAgent, ORIGIN } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

/** A model that streams three deltas and then never answers again, under a one-second run limit. */
const hangingAgent = {
  model: { provider: "local", model: "echo", local: { chunks: 10, hangAfterChunks: 3 } },
  limits: { runTimeoutMs: 1000 },
};

const headersOf = (session: Launch) => ({ Authorization: `Bearer ${session.token}`, Origin: ORIGIN });

const entriesBody = z.object({
  items: z.array(z.object({ role: z.string(), text: z.string(), status: z.string().optional() })),
});

async function entries(session: Launch) {
  const res = await api(`/v1/threads/${session.threadId}/entries`, { headers: headersOf(session) });
  return (await json(res, 200, entriesBody)).items;
}

describe("limits.runTimeoutMs", () => {
  it("ends a hanging run failed with reason timeout, keeping the streamed text, and reports run.failed", async () => {
    const agent = await liveAgent({ artifact: hangingAgent });
    const receiver = fakeReceiver(200);
    const hook = json(
      await api("/v1/webhooks", {
        method: "POST",
        key: agent.apiKey,
        body: { url: receiver.url, events: ["run.failed"] },
      }),
      201,
      webhookWithSecretResponse,
    );
    const { secret } = await hook;
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "a reply that never ends" });
    const third = await socket.next("delta", (d) => d.seq === 3);

    const ended = await socket.next("run", (f) => f.runId === third.runId && f.status !== "running");
    expect(ended).toMatchObject({
      status: "failed",
      error: { code: "upstream_unavailable", reason: "timeout" },
    });
    expect(ended.type === "run" && ended.error?.message).toContain("1 seconds");
    // The three deltas the visitor saw stay in the thread, as a failed reply.
    const streamed = socket
      .all("delta")
      .filter((d) => d.runId === third.runId)
      .map((d) => d.text)
      .join("");
    expect(streamed.length).toBeGreaterThan(0);
    const reply = (await entries(session)).at(-1);
    expect(reply).toMatchObject({ role: "assistant", status: "failed", text: streamed });

    const delivered = await waitFor(
      () => Promise.resolve(receiver.received),
      (received) => received.length > 0,
      { what: "run.failed delivered" },
    );
    expect(verified(secret, delivered[0]!)).toMatchObject({
      type: "run.failed",
      data: {
        runId: third.runId,
        status: "failed",
        error: { code: "upstream_unavailable", reason: "timeout" },
      },
    });

    // The thread goes on: the next message gets a run of its own (which times out too, on this model).
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "again" });
    const next = await socket.next("run", (f) => f.runId !== third.runId && f.status === "failed");
    expect(next).toMatchObject({ error: { reason: "timeout" } });
    socket.ws.close();
  });

  it("answers a non-streaming message past the limit with its failed run", async () => {
    const agent = await liveAgent({ artifact: hangingAgent });
    const session = await launch(agent.publicKey);
    const res = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: headersOf(session),
      body: { clientMessageId: clientMessageId(), text: "over http" },
    });
    const body = await json(
      res,
      201,
      z.object({ run: z.object({ status: z.string(), error: z.object({ reason: z.string() }).optional() }) }),
    );
    expect(body.run).toMatchObject({ status: "failed", error: { reason: "timeout" } });
  });

  it("leaves a run that ends within the limit alone", async () => {
    const agent = await liveAgent({ artifact: { limits: { runTimeoutMs: 1000 } } });
    const session = await launch(agent.publicKey);
    const res = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: headersOf(session),
      body: { clientMessageId: clientMessageId(), text: "quick" },
    });
    expect(await json(res, 201, z.object({ run: z.object({ status: z.string() }) }))).toMatchObject({
      run: { status: "succeeded" },
    });
  });
});
