// Builders for projection tests: real conversations, the thread object behind them, and drains run inside it.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { z } from "zod";
import { type DrainOutcome, drainOutbox } from "../../src/storage/projection/projection-drain";
import { readPin, type ThreadBinding } from "../../src/storage/thread/pin-store";
import { threadObjectName } from "../../src/thread/contract";
import { privateLaunchRequest } from "./edge-gate";
import { api, createAgent, json, publish, saveDraft, validArtifact } from "./tenants";
import { clientMessageId, connect, type Launch, type LiveAgent, launchResponse } from "./threads";

export function threadStub(agent: Pick<LiveAgent, "tenantId" | "agentId">, threadId: string) {
  return threadObjectName(env.DO_NAME_KEY, {
    tenantId: agent.tenantId,
    environment: "development",
    agentId: agent.agentId,
    threadId,
  }).then((name) => env.THREAD.get(env.THREAD.idFromName(name)));
}

/** Sends each text as a user turn over a WebSocket and waits for its reply to finish. */
export async function converse(
  session: Pick<Launch, "threadId" | "token">,
  texts: readonly string[],
  options: { origin?: string } = {},
): Promise<void> {
  const ws = await connect(session, options);
  for (const text of texts) {
    ws.send({ type: "send", clientMessageId: clientMessageId(), text });
    const user = await ws.next("entry", (f) => f.entry.role === "user" && f.entry.text === text);
    await ws.next("run", (f) => f.status === "succeeded" || f.status === "failed" || f.status === "aborted");
    expect(user.entry.text).toBe(text);
  }
  ws.ws.close();
}

/** A second released agent of the same tenant. */
export async function secondAgent(first: LiveAgent): Promise<LiveAgent> {
  const agent = await createAgent(first.apiKey, {
    visibility: "private",
    allowedOrigins: ["https://shop.example.com"],
  });
  await saveDraft(first.apiKey, agent.id, 0, validArtifact({ name: "Billing" }));
  await publish(first.apiKey, agent.id, 1);
  const release = await api(`/v1/agents/${agent.id}/releases`, {
    method: "POST",
    key: first.apiKey,
    body: { environment: "development", allocations: [{ version: 1, weight: 10_000 }] },
  });
  const { id } = z.object({ id: z.string() }).parse(await release.json());
  expect(
    (await api(`/v1/agents/${agent.id}/releases/${id}/activate`, { method: "POST", key: first.apiKey }))
      .status,
  ).toBe(200);
  return { ...first, agentId: agent.id, publicKey: agent.publicKey };
}

/** A private launch for `subject` (the tenant's signed-in user). */
export async function launchFor(agent: LiveAgent, subject: string, threadId?: string): Promise<Launch> {
  const res = await privateLaunchRequest(agent.apiKey, {
    agentId: agent.agentId,
    subject,
    ...(threadId !== undefined ? { threadId } : {}),
  });
  return json(res, 201, launchResponse);
}

/** A D1 binding whose batches fail, as when D1 is unreachable; everything else goes to the real database. */
export function unreachableBatches(db: D1Database = env.DB): D1Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === "batch") return () => Promise.reject(new Error("D1_ERROR: network connection lost"));
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Runs drains inside the thread object until its outbox is empty (or a drain fails). */
export async function drainThread(
  stub: DurableObjectStub,
  options: { db?: D1Database; batchSize?: number; now?: () => number } = {},
): Promise<DrainOutcome[]> {
  return runInDurableObject(stub, async (_instance, state) => {
    const binding = await bindingOf(state.storage);
    const outcomes: DrainOutcome[] = [];
    for (let i = 0; i < 1000; i++) {
      const outcome = await drainOutbox({
        storage: state.storage,
        db: options.db ?? env.DB,
        binding,
        // Far enough ahead that rows backed off by an earlier failure are due.
        now: options.now ?? (() => Date.now() + 3_600_000),
        ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
      });
      outcomes.push(outcome);
      if (outcome.failed || outcome.remaining === 0) break;
    }
    return outcomes;
  });
}

export async function bindingOf(storage: DurableObjectStorage): Promise<ThreadBinding> {
  const pin = await readPin(storage);
  if (!pin.ok || pin.binding === null) throw new Error("the thread is not bound");
  return pin.binding;
}

const entryRow = z.object({
  seq: z.number(),
  id: z.string(),
  parent_id: z.string().nullable(),
  kind: z.string(),
  role: z.string().nullable(),
  run_id: z.string().nullable(),
  text: z.string(),
});

/** The thread's entries as D1 should mirror them, read inside the object. */
export function threadEntries(stub: DurableObjectStub) {
  return runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec(
        "SELECT seq, id, parent_id, kind, role, run_id, COALESCE(json_extract(body_json, '$.text'), body_json) AS text FROM entries ORDER BY seq",
      )
      .toArray()
      .map((r) => entryRow.parse(r)),
  );
}

/** The same shape from D1's copy of one thread. */
export async function projectedEntries(tenantId: string, threadId: string, table = "agent_messages") {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`bad table ${table}`);
  const { results } = await env.DB.prepare(
    `SELECT seq, id, parent_id, kind, role, run_id, content AS text FROM ${table}
     WHERE tenant_id = ? AND session_id = ? ORDER BY seq, id`,
  )
    .bind(tenantId, threadId)
    .all();
  return results.map((r) => entryRow.parse(r));
}

export function outboxRows(stub: DurableObjectStub) {
  return runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec("SELECT seq, kind, ref_id, version, attempts, next_attempt_at FROM outbox ORDER BY seq")
      .toArray()
      .map((r) =>
        z
          .object({
            seq: z.number(),
            kind: z.string(),
            ref_id: z.string(),
            version: z.number(),
            attempts: z.number(),
            next_attempt_at: z.number().nullable(),
          })
          .parse(r),
      ),
  );
}
