// DELETE /v1/sessions/:threadId: the thread object's storage, its D1 rows and its tokens all go; nothing else does.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { expectNothingLeft } from "../helpers/erasure-scan";
import {
  converse,
  drainThread,
  launchFor,
  projectedEntries,
  threadEntries,
  threadStub,
} from "../helpers/projection";
import { api, createApiKey, expectError } from "../helpers/tenants";
import { type LiveAgent, liveAgent, upgradeRequest } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const PROJECTED_TABLES = ["agent_messages", "agent_runs", "agent_usage", "agent_tool_calls"] as const;

async function d1Rows(tenantId: string, threadId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of PROJECTED_TABLES) {
    const row = await env.DB.prepare(
      `SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ? AND session_id = ?`,
    )
      .bind(tenantId, threadId)
      .first();
    counts[table] = z.object({ n: z.number() }).parse(row).n;
  }
  const session = await env.DB.prepare(
    "SELECT COUNT(*) AS n FROM agent_sessions WHERE tenant_id = ? AND id = ?",
  )
    .bind(tenantId, threadId)
    .first();
  counts.agent_sessions = z.object({ n: z.number() }).parse(session).n;
  return counts;
}

/** The object's own tables. */
async function objectState(agent: LiveAgent, threadId: string) {
  return runInDurableObject(await threadStub(agent, threadId), (_i, state) => ({
    entries: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM entries").one().n),
    pinned: state.storage.sql.exec("SELECT COUNT(*) AS n FROM pin").one().n,
  }));
}

/**
 * The object's tables once they are empty. An erased object resets itself just after answering, so a call that
 * reaches it in that moment fails: waited out like any other not-yet state, and the emptiness is what is awaited.
 */
const erasedObjectState = (agent: LiveAgent, threadId: string) =>
  waitFor(
    () => objectState(agent, threadId),
    (state) => state.entries === 0 && state.pinned === 0,
    { what: `thread ${threadId}'s storage to be empty` },
  );

async function projectedThread(agent: LiveAgent, subject: string, texts: string[]) {
  const session = await launchFor(agent, subject);
  await converse(session, texts);
  await drainThread(await threadStub(agent, session.threadId));
  return session;
}

describe("DELETE /v1/sessions/:threadId", () => {
  it("erases the object, the D1 rows and the thread's tokens, and leaves other threads alone", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const doomed = await projectedThread(agent, "user-1", ["forget me", "really"]);
    const kept = await projectedThread(agent, "user-1", ["keep me"]);
    const before = await d1Rows(agent.tenantId, doomed.threadId);
    expect(before).toMatchObject({ agent_messages: 4, agent_runs: 2, agent_sessions: 1 });
    expect(await objectState(agent, doomed.threadId)).toEqual({ entries: 4, pinned: 1 });

    const res = await api(`/v1/sessions/${doomed.threadId}`, { method: "DELETE", key: agent.apiKey });
    expect(res.status).toBe(204);
    expect(await erasedObjectState(agent, doomed.threadId)).toEqual({ entries: 0, pinned: 0 });

    expect(await d1Rows(agent.tenantId, doomed.threadId)).toEqual({
      agent_messages: 0,
      agent_runs: 0,
      agent_usage: 0,
      agent_tool_calls: 0,
      agent_sessions: 0,
    });
    const registry = await env.DB.prepare("SELECT deleted_at FROM threads WHERE tenant_id = ? AND id = ?")
      .bind(agent.tenantId, doomed.threadId)
      .first();
    expect(z.object({ deleted_at: z.string() }).parse(registry).deleted_at).toMatch(/^\d{4}-/);

    // Reads answer 404; the thread's still-valid token is refused at the gate, over HTTP and WebSocket.
    for (const path of ["", "/messages", "/export"]) {
      await expectError(
        await api(`/v1/sessions/${doomed.threadId}${path}`, { key: agent.apiKey }),
        404,
        "not_found",
      );
    }
    await expectError(
      await api(`/v1/threads/${doomed.threadId}`, { headers: { Authorization: `Bearer ${doomed.token}` } }),
      401,
      "unauthenticated",
    );
    const upgrade = await upgradeRequest(doomed.threadId, { token: doomed.token });
    expect(upgrade.status).toBe(401);
    expect(upgrade.webSocket).toBeNull();
    // The refused upgrade recreated nothing.
    expect(await objectState(agent, doomed.threadId)).toEqual({ entries: 0, pinned: 0 });

    // The tenant's other thread is untouched.
    expect(await d1Rows(agent.tenantId, kept.threadId)).toMatchObject({
      agent_messages: 2,
      agent_sessions: 1,
    });
    expect(await projectedEntries(agent.tenantId, kept.threadId)).toEqual(
      await threadEntries(await threadStub(agent, kept.threadId)),
    );

    // Erasing again is harmless.
    expect(
      (await api(`/v1/sessions/${doomed.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    // The kept thread has the same subject: what must be gone is the erased thread's text.
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: ["forget me", "really"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: doomed.threadId }],
    });
  });

  it("refuses a read-only key (403) and another tenant (404), changing nothing", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    const thread = await projectedThread(agent, "user-1", ["still here"]);
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    const before = await d1Rows(agent.tenantId, thread.threadId);

    await expectError(
      await api(`/v1/sessions/${thread.threadId}`, { method: "DELETE", key: reader.apiKey }),
      403,
      "forbidden",
    );
    await expectError(
      await api(`/v1/sessions/${thread.threadId}`, { method: "DELETE", key: other.apiKey }),
      404,
      "not_found",
    );
    await expectError(
      await api("/v1/sessions/thr_nothing", { method: "DELETE", key: agent.apiKey }),
      404,
      "not_found",
    );
    await expectError(
      await api(`/v1/sessions/${thread.threadId}`, { method: "DELETE" }),
      401,
      "unauthenticated",
    );

    expect(await d1Rows(agent.tenantId, thread.threadId)).toEqual(before);
    expect(await objectState(agent, thread.threadId)).toEqual({ entries: 2, pinned: 1 });
    const res = await api(`/v1/threads/${thread.threadId}`, {
      headers: { Authorization: `Bearer ${thread.token}` },
    });
    expect(res.status).toBe(200);
  });
});
