// B9: approvals (docs/tools.md#approvals). On one thread: send → first delta of a plain turn vs decision → first delta
// of the continuation of a turn that waited for an approval. Then N runs parked on approvals, the server restarted on
// its kept state (a redeploy, every object gone from memory), N decisions → N continuations, counting the replies,
// the tool's calls and the runs left waiting.
import { createServer } from "node:http";
import { AdminClient, OperatorClient } from "agent-threads/client";
import { request } from "../../scripts/lib/http-client.mjs";
import { connect, launch, mapLimit, sendFrame } from "../lib/product-client.mjs";
import { BENCH_CHUNKS } from "../lib/seed.mjs";
import { ratio, summarize } from "../lib/stats.mjs";

/** The tool the bench approves: a loopback webhook that refunds; every call's `webhook-id` is kept. */
async function startRefundServer() {
  const webhookIds = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      webhookIds.push(String(req.headers["webhook-id"] ?? ""));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ refunded: true }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/refund`,
    webhookIds,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const model = (local) => ({ provider: "local", model: "echo", local: { chunks: BENCH_CHUNKS, ...local } });

/**
 * One tenant, two agents. `turns`: version 1 replies at once, version 2 first calls `refund`, which waits for an
 * approval, version 3 calls the same `refund` without one; a thread moves between them with the tenant's upgrade (the
 * same thread, the same object). `parked`: every turn calls `refund`, which waits for an approval.
 */
async function seed(baseUrl, operatorToken, toolUrl) {
  const tenant = await new OperatorClient({ baseUrl, operatorToken }).createTenant("Bench approvals");
  const admin = new AdminClient({ baseUrl, apiKey: tenant.apiKey });
  await admin.secrets.put(
    "refund-hook",
    `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
  );
  const refund = {
    name: "refund",
    description: "Refunds an order.",
    url: toolUrl,
    signingSecret: "refund-hook",
    inputSchema: { type: "object", properties: { orderId: { type: "string" } } },
    approval: "always",
  };
  const base = { schemaVersion: 1, instructions: "Refund orders.", limits: { maxSendsPerMinute: 1000 } };
  const call = { toolCall: { name: "refund", input: { orderId: "B9" } } };
  const agents = {};
  for (const [slug, versions] of Object.entries({
    turns: [
      { ...base, name: "B9 turns", model: model({}) },
      { ...base, name: "B9 turns", model: model(call), tools: [refund] },
      { ...base, name: "B9 turns", model: model(call), tools: [{ ...refund, approval: "never" }] },
    ],
    parked: [{ ...base, name: "B9 parked", model: model(call), tools: [refund] }],
  })) {
    const agent = await admin.agents.create({
      slug: `b9-${slug}`,
      name: `B9 ${slug}`,
      visibility: "public",
      allowedOrigins: [baseUrl],
    });
    let revision = 0;
    for (const artifact of versions) {
      const draft = await admin.drafts.put(agent.id, artifact, revision);
      revision = draft.revision;
      await admin.versions.publish(agent.id, draft.revision);
    }
    const release = await admin.releases.create(agent.id, {
      environment: "development",
      allocations: [{ version: 1, weight: 10_000 }],
    });
    await admin.releases.activate(agent.id, release.id);
    agents[slug] = { agentId: agent.id, publicKey: agent.publicKey, origin: baseUrl };
  }
  return { apiKey: tenant.apiKey, ...agents };
}

async function upgrade(baseUrl, apiKey, threadId, version) {
  const res = await request(baseUrl, "POST", `/v1/sessions/${threadId}/upgrade`, {
    token: apiKey,
    body: { version },
  });
  if (res.status !== 200)
    throw new Error(`upgrading to version ${version}: ${res.status} ${JSON.stringify(res.body)}`);
}

/**
 * The visitor's frame budget on a thread, mirrored: a burst of 60 frames refilled at one a second (docs/protocol.md
 * #limits); past it the socket is closed 4429. `spend()` waits for a token, always before a measured interval starts.
 */
function frameBudget() {
  let tokens = 60;
  let at = performance.now();
  const refill = () => {
    const now = performance.now();
    tokens = Math.min(60, tokens + (now - at) / 1000);
    at = now;
  };
  return async () => {
    refill();
    // Two spare tokens: the server's clock and ours are not the same clock.
    if (tokens < 3) await new Promise((resolve) => setTimeout(resolve, (3 - tokens) * 1000));
    refill();
    tokens -= 1;
  };
}

/** Sends `text` and waits for its run to park; a run that ends instead is reported with the frames seen. */
async function sendUntilParked(socket, text) {
  const seen = [];
  const waiting = socket.waitFor(
    (f) => {
      seen.push(
        f.type === "run" ? `run ${f.status}` : f.type === "entry" ? `entry ${f.entry?.kind}` : f.type,
      );
      return f.type === "run" && ["requires_action", "succeeded", "failed", "aborted"].includes(f.status);
    },
    30_000,
    "requires_action",
  );
  socket.send(sendFrame(text));
  let parked;
  try {
    parked = await waiting;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error} (frames: ${seen.join(", ")})`);
  }
  if (parked.frame.status !== "requires_action") {
    throw new Error(
      `the run ended ${parked.frame.status} without waiting: ${JSON.stringify(parked.frame.error ?? null)} (frames: ${seen.join(", ")})`,
    );
  }
  return parked;
}

/** A turn that parks on its approval, then the decision on the same socket: times from the decision. */
async function approvalTurn(socket, text, spend) {
  await spend();
  const t0 = performance.now();
  const { frame, at } = await sendUntilParked(socket, text);
  const parkedMs = at - t0;
  const approvalId = frame.actions?.[0]?.approvalId;
  if (approvalId === undefined) throw new Error("the waiting run frame named no approval");
  await spend();
  const run = await socket.turn({ type: "approval", approvalId, decision: "approve" }, BENCH_CHUNKS);
  return { ...run, parkedMs, approvalId };
}

/**
 * On one thread, in alternating blocks (drift falls on all alike): `samples` plain turns, `samples` turns that wait
 * for an approval then the decision, and `samples` turns that call the same tool without one (what the tool's call
 * itself costs before the reply).
 */
async function oneThread({ product, seeded, samples, refund }) {
  const session = await launch(product.baseUrl, seeded.turns);
  const spend = frameBudget();
  await spend(); // hello
  const { socket } = await connect(session, seeded.turns);
  const plainTurn = async (text) => {
    await spend();
    return socket.turn(sendFrame(text), BENCH_CHUNKS);
  };
  const plain = [];
  const approved = [];
  const direct = [];
  const blocks = 2;
  let version = 1;
  try {
    // One turn of each kind first, not counted: the object and both versions warm.
    await plainTurn("A plain turn to warm the thread up");
    await upgrade(product.baseUrl, seeded.apiKey, session.threadId, 2);
    version = 2;
    await approvalTurn(socket, "warm up the refund", spend);
    for (let b = 0; b < blocks; b += 1) {
      const n = Math.floor((samples * (b + 1)) / blocks) - Math.floor((samples * b) / blocks);
      await upgrade(product.baseUrl, seeded.apiKey, session.threadId, 1);
      version = 1;
      for (let i = 0; i < n; i += 1)
        plain.push(await plainTurn(`A plain turn, number ${b}.${i}, on the same thread`));
      await upgrade(product.baseUrl, seeded.apiKey, session.threadId, 2);
      version = 2;
      for (let i = 0; i < n; i += 1) approved.push(await approvalTurn(socket, `refund ${b}.${i}`, spend));
      await upgrade(product.baseUrl, seeded.apiKey, session.threadId, 3);
      version = 3;
      for (let i = 0; i < n; i += 1) direct.push(await plainTurn(`refund without asking ${b}.${i}`));
    }
  } finally {
    socket.close();
  }
  const ok = (runs) => runs.filter((r) => r.status === "succeeded");
  const sendFirst = summarize(ok(plain).map((r) => r.firstDeltaMs));
  const decisionFirst = summarize(ok(approved).map((r) => r.firstDeltaMs));
  const ids = approved.map((r) => r.approvalId);
  return {
    threadId: session.threadId,
    version,
    samples,
    plainSucceeded: ok(plain).length,
    approvalSucceeded: ok(approved).length,
    directSucceeded: ok(direct).length,
    sendToFirstDeltaMs: sendFirst,
    decisionToFirstDeltaMs: decisionFirst,
    sendToParkedMs: summarize(approved.map((r) => r.parkedMs)),
    toolTurnSendToFirstDeltaMs: summarize(ok(direct).map((r) => r.firstDeltaMs)),
    decisionToRunEndMs: summarize(ok(approved).map((r) => r.endMs)),
    ratioP50: ratio(decisionFirst.p50, sendFirst.p50),
    lostDeltas: [...approved, ...plain, ...direct].reduce((n, r) => n + r.lost, 0),
    duplicatedDeltas: [...approved, ...plain, ...direct].reduce((n, r) => n + r.duplicated, 0),
    // The warm-up's approval is in `refund.webhookIds` too: only the measured ones are compared.
    toolCallsPerApproval:
      ids.length === 0 ? null : ids.filter((id) => refund.webhookIds.includes(id)).length / ids.length,
  };
}

/** N runs parked, the server restarted on its state, N decisions (half launch token, half tenant key) → N replies. */
async function parkedRuns({ product, seeded, runs, refund, log }) {
  const agent = seeded.parked;
  const before = refund.webhookIds.length;
  const parked = await mapLimit(
    Array.from({ length: runs }, (_, i) => i),
    5,
    async (i) => {
      const session = await launch(product.baseUrl, agent);
      const { socket } = await connect(session, agent);
      try {
        const { frame } = await sendUntilParked(socket, `refund order ${i}`);
        return { i, session, runId: frame.runId, approvalId: frame.actions[0].approvalId };
      } finally {
        socket.close();
      }
    },
  );
  log?.(`  ${runs} runs parked; restarting the server on its state…`);
  const restartStart = performance.now();
  await product.restart();
  const restartSeconds = (performance.now() - restartStart) / 1000;

  const decided = await mapLimit(parked, 10, async ({ i, session, approvalId }) => {
    const t0 = performance.now();
    const res =
      i % 2 === 0
        ? await request(product.baseUrl, "POST", `/v1/threads/${session.threadId}/approvals/${approvalId}`, {
            token: session.token,
            headers: { Origin: agent.origin },
            body: { decision: "approve" },
            timeoutMs: 60_000,
          })
        : await request(product.baseUrl, "POST", `/v1/sessions/${session.threadId}/approvals/${approvalId}`, {
            token: seeded.apiKey,
            body: { decision: "approve" },
            timeoutMs: 60_000,
          });
    return { status: res.status, ms: performance.now() - t0 };
  });

  // Each thread's reply, read back over HTTP until it is there (or 60 s pass).
  const deadline = Date.now() + 60_000;
  const replied = await mapLimit(parked, 10, async ({ session }) => {
    for (;;) {
      const res = await request(product.baseUrl, "GET", `/v1/threads/${session.threadId}/entries`, {
        token: session.token,
        headers: { Origin: agent.origin },
      });
      const items = res.body?.items ?? [];
      if (items.some((e) => e.role === "assistant")) return true;
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  const continuations = replied.filter(Boolean).length;

  // What the tenant's side says once the projection caught up: each thread's last run, and the pending approvals.
  const lastRuns = await mapLimit(parked, 10, async ({ session }) => {
    const until = Date.now() + 20_000;
    for (;;) {
      const res = await request(product.baseUrl, "GET", `/v1/sessions/${session.threadId}`, {
        token: seeded.apiKey,
      });
      const status = res.body?.lastRun?.status ?? null;
      if (status === "succeeded" || Date.now() > until) return status;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
  const pending = await request(
    product.baseUrl,
    "GET",
    `/v1/approvals?status=pending&agentId=${agent.agentId}`,
    {
      token: seeded.apiKey,
    },
  );
  const calls = refund.webhookIds.slice(before);
  const approvalIds = new Set(parked.map((p) => p.approvalId));
  return {
    runs,
    parked: parked.length,
    restartSeconds: Math.round(restartSeconds * 10) / 10,
    decisionsOk: decided.filter((d) => d.status === 200).length,
    decisionMs: summarize(decided.map((d) => d.ms)),
    continuations,
    toolCalls: calls.length,
    toolCallsMatchingApprovals: calls.filter((id) => approvalIds.has(id)).length,
    duplicateToolCalls: calls.length - new Set(calls).size,
    runsNotSucceeded: lastRuns.filter((s) => s !== "succeeded").length,
    runsLeftRequiresAction: lastRuns.filter((s) => s === "requires_action").length,
    pendingApprovals: Array.isArray(pending.body?.items) ? pending.body.items.length : null,
  };
}

export async function benchApprovals({ product, samples = 30, runs = 100, log }) {
  const refund = await startRefundServer();
  try {
    const seeded = await seed(product.baseUrl, product.operatorToken, refund.url);
    const thread = await oneThread({ product, seeded, samples, refund });
    log?.(`  one thread: ${samples} plain, ${samples} approval and ${samples} direct tool turns`);
    const parked = await parkedRuns({ product, seeded, runs, refund, log });
    return { thread, parked };
  } finally {
    await refund.close();
  }
}
