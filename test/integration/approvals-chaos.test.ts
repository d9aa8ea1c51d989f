// Approvals under load and races (docs/tools.md#approvals): a hundred runs parked and their objects evicted, decided
// through both HTTP doors, each going on exactly once; three approvals of one step decided in any order, one
// continuation; two tabs deciding the same approval at once, one winner.
import { evictDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonResponse } from "../helpers/fake-tool-server";
import { threadStub } from "../helpers/projection";
import { api } from "../helpers/tenants";
import {
  clientMessageId,
  connect,
  type FrameReader,
  type Launch,
  type LiveAgent,
  launch,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const REFUND_URL = "https://hooks.example.com/refund";
const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

afterEach(() => {
  vi.restoreAllMocks();
});

const refundTool = {
  name: "refund",
  description: "Refunds an order.",
  url: REFUND_URL,
  signingSecret: "hook-signing",
  approval: "always",
};

async function refundAgent(local: Record<string, unknown>): Promise<LiveAgent> {
  const agent = await liveAgent({
    artifact: { model: { provider: "local", model: "echo", local }, tools: [refundTool] },
  });
  const put = await api("/v1/secrets/hook-signing", {
    method: "PUT",
    key: agent.apiKey,
    body: { value: SIGNING_SECRET },
  });
  expect(put.status).toBe(204);
  return agent;
}

interface Delivery {
  webhookId: string;
  threadId: string;
  orderId: string;
}

/** The refund webhook: every delivery recorded; it answers with the order it refunded. */
function refundEndpoint(): Delivery[] {
  const deliveries: Delivery[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (request.url !== REFUND_URL) throw new Error(`unexpected outbound request to ${request.url}`);
    const body = (await request.json()) as { input: { orderId: string }; context: { threadId: string } };
    deliveries.push({
      webhookId: request.headers.get("webhook-id") ?? "",
      threadId: body.context.threadId,
      orderId: body.input.orderId,
    });
    return jsonResponse({ refunded: body.input.orderId });
  });
  return deliveries;
}

/** Runs `fn` over `items`, `size` at a time (the test machine has two cores). */
async function inBatches<T, R>(items: readonly T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size)
    out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

const userHeaders = (session: Launch) => ({ Authorization: `Bearer ${session.token}`, Origin: ORIGIN });

interface EntryItem {
  kind: string;
  role: string | null;
  text: string;
}

async function entriesOf(session: Launch): Promise<EntryItem[]> {
  const page = await api(`/v1/threads/${session.threadId}/entries`, { headers: userHeaders(session) });
  expect(page.status).toBe(200);
  return ((await page.json()) as { items: EntryItem[] }).items;
}

/** A decision through the thread's door (launch token) or the tenant's (sk_ key). */
function decide(
  agent: LiveAgent,
  session: Launch,
  approvalId: string,
  door: "user" | "tenant",
  decision: "approve" | "deny" = "approve",
): Promise<Response> {
  return door === "user"
    ? api(`/v1/threads/${session.threadId}/approvals/${approvalId}`, {
        method: "POST",
        headers: userHeaders(session),
        body: { decision },
      })
    : api(`/v1/sessions/${session.threadId}/approvals/${approvalId}`, {
        method: "POST",
        key: agent.apiKey,
        body: { decision },
      });
}

describe("approvals under load", () => {
  it("parks 100 runs, loses nothing to eviction, and each decision continues its run exactly once", async () => {
    const agent = await refundAgent({ toolCall: { name: "refund", input: { orderId: "ORD-1" } } });
    const deliveries = refundEndpoint();
    const RUNS = 100;

    // 100 threads of one agent, one run each, every run parked on its approval.
    const parked = await inBatches(
      Array.from({ length: RUNS }, (_, i) => i),
      10,
      async (index) => {
        const session = await launch(agent.publicKey);
        const socket = await connect(session);
        socket.send({ type: "send", clientMessageId: clientMessageId(), text: `refund ${index}` });
        const waiting = await socket.next("run", (f) => f.status === "requires_action", 15_000);
        socket.ws.close();
        expect(waiting.actions).toHaveLength(1);
        return { index, session, runId: waiting.runId, approvalId: waiting.actions![0]!.approvalId };
      },
    );
    expect(new Set(parked.map((p) => p.approvalId)).size).toBe(RUNS);
    expect(deliveries).toEqual([]);

    // Every object leaves memory; the waiting runs live only in storage.
    await inBatches(parked, 20, async ({ session }) => {
      try {
        await evictDurableObject(await threadStub(agent, session.threadId));
      } catch (error) {
        // An object that already left memory (hibernated with no socket open) is as evicted as can be.
        if (!String(error).includes("not currently running")) throw error;
      }
    });

    // Half decided by the user's launch token, half by the tenant's key.
    const answers = await inBatches(parked, 10, async ({ index, session, approvalId }) => {
      const res = await decide(agent, session, approvalId, index % 2 === 0 ? "user" : "tenant");
      return { status: res.status, body: await res.text() };
    });
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);

    // Each thread's reply arrives, after its decision, with the tool's answer.
    await inBatches(parked, 10, async ({ session }) => {
      const items = await waitFor(
        () => entriesOf(session),
        (items) => items.some((e) => e.role === "assistant"),
        { what: `the reply of thread ${session.threadId}`, timeoutMs: 20_000 },
      );
      expect(items.map((e) => e.kind)).toEqual([
        "message",
        "approval_request",
        "approval_decision",
        "message",
      ]);
      expect(items.at(-1)?.text).toContain('"refunded":"ORD-1"');
    });

    // The tool ran once per approval, its delivery id the approval's, for the approval's own thread.
    expect(deliveries).toHaveLength(RUNS);
    expect(new Set(deliveries.map((d) => d.webhookId))).toEqual(new Set(parked.map((p) => p.approvalId)));
    const threadOf = new Map(parked.map((p) => [p.approvalId, p.session.threadId]));
    for (const d of deliveries) expect(d.threadId).toBe(threadOf.get(d.webhookId));

    // No run is left waiting: every thread's last run succeeded, and the tenant has nothing pending.
    const lastRuns = await inBatches(parked, 10, async ({ session, runId }) => {
      const view = await waitFor(
        async () => {
          const res = await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey });
          return (await res.json()) as { lastRun: { id: string; status: string } | null };
        },
        (v) => v.lastRun?.status === "succeeded",
        { what: `the last run of ${session.threadId} to be succeeded` },
      );
      expect(view.lastRun?.id).toBe(runId);
      return view.lastRun?.status;
    });
    expect(lastRuns.filter((s) => s === "requires_action")).toHaveLength(0);
    const pending = await api(`/v1/approvals?status=pending&agentId=${agent.agentId}`, { key: agent.apiKey });
    expect(((await pending.json()) as { items: unknown[] }).items).toEqual([]);
    const approved = await waitFor(
      async () => {
        const items: unknown[] = [];
        let cursor: string | undefined;
        do {
          const res = await api(
            `/v1/approvals?status=approved&agentId=${agent.agentId}&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
            { key: agent.apiKey },
          );
          const page = (await res.json()) as { items: unknown[]; nextCursor?: string };
          items.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return items.length;
      },
      (n) => n === RUNS,
      { what: "100 approved approvals in D1" },
    );
    expect(approved).toBe(RUNS);
  }, 120_000);
});

describe("several approvals in one step", () => {
  it("waits for all three, decided in any order through any door, then continues once with each call's result", async () => {
    const agent = await refundAgent({
      toolCalls: [
        { name: "refund", input: { orderId: "P1" } },
        { name: "refund", input: { orderId: "P2" } },
        { name: "refund", input: { orderId: "P3" } },
      ],
    });
    const deliveries = refundEndpoint();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund all three" });
    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    const actions = waiting.actions!;
    expect(actions.map((a) => a.input)).toEqual([{ orderId: "P1" }, { orderId: "P2" }, { orderId: "P3" }]);
    const [first, second, third] = actions.map((a) => a.approvalId) as [string, string, string];
    // The run's moves back to running after it parked.
    const resumed = () =>
      socket.frames
        .slice(socket.frames.indexOf(waiting) + 1)
        .filter((f) => f.type === "run" && f.runId === waiting.runId && f.status === "running");

    // The last call first (the tenant), then the middle one denied (the socket), then the first (the user's HTTP).
    expect((await decide(agent, session, third, "tenant")).status).toBe(200);
    socket.send({ type: "approval", approvalId: second, decision: "deny", reason: "duplicate" });
    await socket.next("entry", (f) => f.entry.decision?.approvalId === second);
    // Two of three decided: nothing runs yet.
    expect(deliveries).toEqual([]);
    expect(resumed()).toHaveLength(0);
    expect((await decide(agent, session, first, "user")).status).toBe(200);

    const done = await socket.next("run", (f) => f.runId === waiting.runId && f.status === "succeeded");
    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text.split("\n")).toEqual([
      'The refund tool returned: {"refunded":"P1"}',
      'The refund tool returned: {"denied":true,"reason":"duplicate"}',
      'The refund tool returned: {"refunded":"P3"}',
    ]);
    expect(done.runId).toBe(waiting.runId);
    // One continuation: the run went back to running once, and one reply.
    expect(resumed()).toHaveLength(1);
    expect(socket.all("entry").filter((f) => f.entry.role === "assistant")).toHaveLength(1);
    expect(deliveries.map((d) => [d.webhookId, d.orderId]).sort()).toEqual(
      [
        [first, "P1"],
        [third, "P3"],
      ].sort(),
    );
    socket.ws.close();
  });
});

describe("two tabs deciding at once", () => {
  async function parkedRun() {
    const agent = await refundAgent({ toolCall: { name: "refund", input: { orderId: "T1" } } });
    const deliveries = refundEndpoint();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund T1" });
    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    return { agent, deliveries, session, socket, approvalId: waiting.actions![0]!.approvalId };
  }

  it("over HTTP: one 200, one 409 already_decided, the tool called once", async () => {
    const { agent, deliveries, session, socket, approvalId } = await parkedRun();
    const answers = await Promise.all([
      decide(agent, session, approvalId, "user"),
      decide(agent, session, approvalId, "user", "deny"),
    ]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    const loser = answers.find((r) => r.status === 409)!;
    expect(await loser.json()).toMatchObject({ error: { code: "conflict", reason: "already_decided" } });
    const winner = (await answers.find((r) => r.status === 200)!.json()) as { approval: { status: string } };

    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    if (winner.approval.status === "approved") {
      expect(reply.entry.text).toContain('"refunded":"T1"');
      expect(deliveries.map((d) => d.webhookId)).toEqual([approvalId]);
    } else {
      expect(reply.entry.text).toContain('"denied":true');
      expect(deliveries).toEqual([]);
    }
    expect(socket.all("entry").filter((f) => f.entry.kind === "approval_decision")).toHaveLength(1);
    socket.ws.close();
  });

  it("over two sockets: one decision wins, the other tab gets conflict already_decided", async () => {
    const { deliveries, session, socket, approvalId } = await parkedRun();
    const tabs: FrameReader[] = [await connect(session), await connect(session)];
    for (const tab of tabs) tab.send({ type: "approval", approvalId, decision: "approve" });

    const refusals = await waitFor(
      () => tabs.flatMap((tab) => tab.all("error")),
      (errors) => errors.length > 0,
      { what: "a tab told its decision came second" },
    );
    // Both tabs see the run go on to its reply; exactly one of them was refused.
    for (const tab of tabs) await tab.next("entry", (f) => f.entry.role === "assistant");
    expect(tabs.flatMap((tab) => tab.all("error"))).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ code: "conflict", reason: "already_decided" });
    expect(socket.all("entry").filter((f) => f.entry.kind === "approval_decision")).toHaveLength(1);
    expect(deliveries.map((d) => d.webhookId)).toEqual([approvalId]);
    for (const tab of [socket, ...tabs]) tab.ws.close();
  });
});
