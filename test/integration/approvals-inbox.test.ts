// The approval inbox: approvals the thread queues reach D1's agent_approvals through the real drain, newest state
// wins, GET /v1/approvals lists one tenant's, and erasing a thread takes its approvals with it.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type ApprovalView, approvalView } from "../../src/shared/approvals-api";
import { upsertApproval, upsertRun } from "../../src/storage/d1/projection-writer";
import { pruneSession } from "../../src/storage/d1/session-retention";
import { type ApprovalProjection, enqueueApproval } from "../../src/storage/projection/approval-outbox";
import { reconcileProjection } from "../../src/storage/projection/projection-reconcile";
import { approvalRow, runRow } from "../../src/storage/projection/projection-rows";
import { ActionStore } from "../../src/storage/thread/action-store";
import { jsonResponse } from "../helpers/fake-tool-server";
import { bindingOf, converse, drainThread, outboxRows, threadStub } from "../helpers/projection";
import { api, expectError, fieldPaths, json } from "../helpers/tenants";
import { clientMessageId, connect, type Launch, type LiveAgent, launch, liveAgent } from "../helpers/threads";

const agentOptions = { artifact: { model: { provider: "local", model: "echo", local: { chunks: 1 } } } };
const page = z.strictObject({ items: z.array(approvalView), nextCursor: z.string().optional() });

/** A projected thread of a fresh tenant: one turn, drained, so D1 has its session. */
async function projectedThread(): Promise<{ agent: LiveAgent; session: Launch; stub: DurableObjectStub }> {
  const agent = await liveAgent(agentOptions);
  const session = await launch(agent.publicKey);
  await converse(session, ["hello"]);
  const stub = await threadStub(agent, session.threadId);
  await drainThread(stub);
  return { agent, session, stub };
}

function approval(
  agent: LiveAgent,
  threadId: string,
  id: string,
  fields: Partial<ApprovalView> = {},
): ApprovalProjection {
  return {
    id,
    threadId,
    agentId: agent.agentId,
    runId: `run_${id}`,
    toolCallId: `call_${id}`,
    toolName: "refund",
    status: "pending",
    by: "tenant",
    requestedAt: "2026-12-05T10:00:00.000Z",
    expiresAt: "2026-12-05T11:00:00.000Z",
    decidedAt: null,
    decidedBy: null,
    reason: null,
    ...fields,
    tenantId: agent.tenantId,
    environment: "development",
  };
}

/** Queues each approval view inside the thread object, as its runtime does in the transaction of the change. */
function queue(stub: DurableObjectStub, items: { view: ApprovalProjection; revision: number }[]) {
  return runInDurableObject(stub, (_i, state) => {
    state.storage.transactionSync(() => {
      for (const { view, revision } of items) enqueueApproval(state.storage, view, revision, Date.now());
    });
  });
}

async function inbox(key: string, query = ""): Promise<z.output<typeof page>> {
  return json(await api(`/v1/approvals${query}`, { key }), 200, page);
}

async function d1Approvals(tenantId: string, threadId: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, status, version FROM agent_approvals WHERE tenant_id = ? AND thread_id = ? ORDER BY id",
  )
    .bind(tenantId, threadId)
    .all();
  return results;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("GET /v1/approvals", () => {
  it("lists a run's real approval while it waits, and as approved once the tenant decided it", async () => {
    const agent = await liveAgent({
      artifact: {
        model: {
          provider: "local",
          model: "echo",
          local: { toolCall: { name: "refund", input: { orderId: "C3" } } },
        },
        tools: [
          {
            name: "refund",
            description: "Refunds an order.",
            url: "https://hooks.example.com/refund",
            signingSecret: "hook-signing",
            approval: { by: "tenant" },
          },
        ],
      },
    });
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
    });
    expect(put.status).toBe(204);
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => jsonResponse({ refunded: true }));
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund C3" });
    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    const action = waiting.actions?.[0];
    await drainThread(stub);

    const pending = await inbox(agent.apiKey);
    expect(pending.items).toEqual([
      {
        id: action?.approvalId,
        threadId: session.threadId,
        agentId: agent.agentId,
        runId: waiting.runId,
        toolCallId: action?.toolCallId,
        toolName: "refund",
        status: "pending",
        by: "tenant",
        requestedAt: expect.any(String),
        expiresAt: action?.expiresAt,
        decidedAt: null,
        decidedBy: null,
        reason: null,
      },
    ]);

    const decided = await api(`/v1/sessions/${session.threadId}/approvals/${action?.approvalId}`, {
      method: "POST",
      key: agent.apiKey,
      body: { decision: "approve", reason: "fine" },
    });
    expect(decided.status).toBe(200);
    await socket.next("run", (f) => f.status === "succeeded");
    socket.ws.close();
    await drainThread(stub);
    expect((await inbox(agent.apiKey)).items).toEqual([]);
    expect((await inbox(agent.apiKey, "?status=approved")).items).toMatchObject([
      { id: action?.approvalId, status: "approved", decidedBy: "tenant", reason: "fine" },
    ]);
  });

  it("lists the tenant's pending approvals newest first, page by page, and no other tenant's", async () => {
    const { agent, session, stub } = await projectedThread();
    const other = await projectedThread();
    await queue(stub, [
      { view: approval(agent, session.threadId, "apr_old"), revision: 1 },
      {
        view: approval(agent, session.threadId, "apr_new", { requestedAt: "2026-12-05T10:05:00.000Z" }),
        revision: 1,
      },
      {
        view: approval(agent, session.threadId, "apr_done", {
          status: "approved",
          decidedAt: "2026-12-05T10:01:00.000Z",
          decidedBy: "tenant",
          reason: "ok",
        }),
        revision: 2,
      },
    ]);
    await queue(other.stub, [
      { view: approval(other.agent, other.session.threadId, "apr_foreign"), revision: 1 },
    ]);
    await drainThread(stub);
    await drainThread(other.stub);
    expect(await outboxRows(stub)).toEqual([]);

    const pending = await inbox(agent.apiKey);
    expect(pending.items.map((a) => a.id)).toEqual(["apr_new", "apr_old"]);
    expect(pending.items[1]).toEqual({
      id: "apr_old",
      threadId: session.threadId,
      agentId: agent.agentId,
      runId: "run_apr_old",
      toolCallId: "call_apr_old",
      toolName: "refund",
      status: "pending",
      by: "tenant",
      requestedAt: "2026-12-05T10:00:00.000Z",
      expiresAt: "2026-12-05T11:00:00.000Z",
      decidedAt: null,
      decidedBy: null,
      reason: null,
    });
    expect(pending.nextCursor).toBeUndefined();

    const first = await inbox(agent.apiKey, "?status=pending&limit=1");
    expect(first.items.map((a) => a.id)).toEqual(["apr_new"]);
    expect(first.nextCursor).toBeDefined();
    const second = await inbox(agent.apiKey, `?limit=1&cursor=${encodeURIComponent(first.nextCursor ?? "")}`);
    expect(second.items.map((a) => a.id)).toEqual(["apr_old"]);
    expect(second.nextCursor).toBeUndefined();
    // A cursor continues only the list it came from.
    await expectError(
      await api(`/v1/approvals?status=approved&cursor=${encodeURIComponent(first.nextCursor ?? "")}`, {
        key: agent.apiKey,
      }),
      400,
      "bad_request",
    );

    expect((await inbox(agent.apiKey, "?status=approved")).items).toMatchObject([
      { id: "apr_done", status: "approved", decidedBy: "tenant", reason: "ok" },
    ]);
    expect((await inbox(agent.apiKey, `?agentId=${agent.agentId}`)).items).toHaveLength(2);
    expect((await inbox(agent.apiKey, `?agentId=${other.agent.agentId}`)).items).toEqual([]);
    expect((await inbox(other.agent.apiKey)).items.map((a) => a.id)).toEqual(["apr_foreign"]);

    const bad = await expectError(
      await api("/v1/approvals?status=waiting", { key: agent.apiKey }),
      400,
      "bad_request",
    );
    expect(fieldPaths(bad)).toEqual(["status"]);
    expect((await api("/v1/approvals")).status).toBe(401);
  });

  it("keeps the newest state: a decision replaces the pending row, a late older one changes nothing", async () => {
    const { agent, session, stub } = await projectedThread();
    await queue(stub, [{ view: approval(agent, session.threadId, "apr_1"), revision: 1 }]);
    // Decided before the drain: the one waiting row takes the newer view.
    const decided = approval(agent, session.threadId, "apr_1", {
      status: "denied",
      decidedAt: "2026-12-05T10:02:00.000Z",
      decidedBy: "user",
      reason: "not today",
    });
    await queue(stub, [{ view: decided, revision: 2 }]);
    expect((await outboxRows(stub)).filter((r) => r.kind === "approval")).toMatchObject([
      { ref_id: "apr_1", version: 2 },
    ]);
    await drainThread(stub);
    expect(await d1Approvals(agent.tenantId, session.threadId)).toEqual([
      { id: "apr_1", status: "denied", version: 2 },
    ]);

    const scope = { tenantId: agent.tenantId, threadId: session.threadId };
    const [stale] = await env.DB.batch([
      upsertApproval(
        env.DB,
        scope,
        approvalRow(approval(agent, session.threadId, "apr_1"), 1, "development"),
      ),
    ]);
    expect(stale?.meta.changes).toBe(0);
    expect((await inbox(agent.apiKey)).items).toEqual([]);
    expect((await inbox(agent.apiKey, "?status=denied")).items).toMatchObject([
      { id: "apr_1", decidedBy: "user", reason: "not today" },
    ]);
  });

  it("takes the tenant and environment from the thread when the view leaves them out, and drops a foreign view", async () => {
    const { agent, session, stub } = await projectedThread();
    const { tenantId: _t, environment: _e, ...bare } = approval(agent, session.threadId, "apr_bare");
    const foreign = approval(agent, "thr_someone_else", "apr_foreign");
    await queue(stub, [
      { view: bare, revision: 1 },
      { view: foreign, revision: 1 },
    ]);
    await drainThread(stub);
    expect(await outboxRows(stub)).toEqual([]);
    const { results } = await env.DB.prepare(
      "SELECT id, thread_id, environment FROM agent_approvals WHERE tenant_id = ? ORDER BY id",
    )
      .bind(agent.tenantId)
      .all();
    expect(results).toEqual([{ id: "apr_bare", thread_id: session.threadId, environment: "development" }]);
  });

  it("sends the thread's approvals again when D1 lost the thread", async () => {
    const { agent, session, stub } = await projectedThread();
    await runInDurableObject(stub, (_i, state) => {
      const actions = new ActionStore(state.storage, { now: () => Date.parse("2026-12-05T10:00:00.000Z") });
      actions.create({
        id: "apr_kept",
        runId: "run_kept",
        kind: "approval",
        toolCallId: "call_kept",
        name: "refund",
        input: { amount: 20 },
        inputDigest: "sha256:0",
        artifactDigest: "sha256:0",
        approver: "user",
        expiresAt: Date.parse("2026-12-05T11:00:00.000Z"),
      });
    });
    await env.DB.batch(
      ["agent_approvals", "agent_sessions"].map((table) =>
        env.DB.prepare(
          `DELETE FROM ${table} WHERE tenant_id = ? AND ${table === "agent_sessions" ? "id" : "thread_id"} = ?`,
        ).bind(agent.tenantId, session.threadId),
      ),
    );
    await runInDurableObject(stub, async (_i, state) =>
      reconcileProjection({
        storage: state.storage,
        db: env.DB,
        binding: await bindingOf(state.storage),
        now: Date.now,
      }),
    );
    await drainThread(stub);
    expect((await inbox(agent.apiKey)).items).toEqual([
      {
        id: "apr_kept",
        threadId: session.threadId,
        agentId: agent.agentId,
        runId: "run_kept",
        toolCallId: "call_kept",
        toolName: "refund",
        status: "pending",
        by: "user",
        requestedAt: "2026-12-05T10:00:00.000Z",
        expiresAt: "2026-12-05T11:00:00.000Z",
        decidedAt: null,
        decidedBy: null,
        reason: null,
      },
    ]);
  });

  it("loses a thread's approvals with the thread when it is erased", async () => {
    const { agent, session, stub } = await projectedThread();
    await queue(stub, [{ view: approval(agent, session.threadId, "apr_gone"), revision: 1 }]);
    await drainThread(stub);
    expect(await d1Approvals(agent.tenantId, session.threadId)).toHaveLength(1);

    expect(
      (await api(`/v1/sessions/${session.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    expect(await d1Approvals(agent.tenantId, session.threadId)).toEqual([]);
    expect((await inbox(agent.apiKey)).items).toEqual([]);
  });

  it("has retention remove settled approvals past the cutoff and keep pending ones", async () => {
    const { agent, session, stub } = await projectedThread();
    const settled = {
      status: "approved" as const,
      decidedAt: "2026-12-05T10:01:00.000Z",
      decidedBy: "tenant" as const,
    };
    await queue(stub, [
      { view: approval(agent, session.threadId, "apr_old_settled", settled), revision: 2 },
      { view: approval(agent, session.threadId, "apr_old_pending"), revision: 1 },
      {
        view: approval(agent, session.threadId, "apr_new_settled", {
          ...settled,
          requestedAt: "2026-12-05T11:00:00.000Z",
        }),
        revision: 2,
      },
    ]);
    await drainThread(stub);
    await pruneSession(
      env.DB,
      {
        tenantId: agent.tenantId,
        threadId: session.threadId,
        agentId: agent.agentId,
        environment: "development",
        maxAgeDays: 1,
        maxMessages: null,
      },
      { ageCutoff: "2026-12-05T10:30:00.000Z", nextDueAt: null },
    );
    expect((await d1Approvals(agent.tenantId, session.threadId)).map((r) => r.id)).toEqual([
      "apr_new_settled",
      "apr_old_pending",
    ]);
  });

  it("projects a run waiting for a decision as still running", async () => {
    const { agent, session } = await projectedThread();
    const scope = { tenantId: agent.tenantId, threadId: session.threadId };
    const run = runRow(
      {
        id: "run_parked",
        status: "requires_action",
        idempotencyKey: null,
        userEntryId: null,
        assistantEntryId: null,
        parentEntryId: null,
        createdAt: Date.parse("2026-12-05T10:00:00.000Z"),
        startedAt: Date.parse("2026-12-05T10:00:00.000Z"),
        endedAt: null,
        abortReason: null,
        error: null,
        versionId: null,
        firstDeltaMs: null,
        revision: 3,
      },
      agent.agentId,
      null,
    );
    // D1's runs table takes only the statuses it had before approvals: a batch with anything else fails whole.
    await env.DB.batch([upsertRun(env.DB, scope, run)]);
    const row = await env.DB.prepare(
      "SELECT status FROM agent_runs WHERE tenant_id = ? AND id = 'run_parked'",
    )
      .bind(agent.tenantId)
      .first();
    expect(row).toEqual({ status: "running" });
  });
});
