// Per-tenant quotas the operator sets: launches and tokens per day, threads answering at once. Each refusal is a
// 429 quota_exceeded with Retry-After (an error frame on a socket) and stores nothing.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tenantRunQuota, UNLIMITED_RECHECK_MS } from "../../src/auth/run-quota";
import { RUN_LEASE_MS, tenantQuota } from "../../src/auth/tenant-quota";
import { OperatorClient } from "../../src/client/index";
import { tenantFootprint } from "../helpers/edge-gate";
import { threadStub } from "../helpers/projection";
import { api, expectError, json, operatorHeaders } from "../helpers/tenants";
import { inTestQuota } from "../helpers/test-tenant-quota";
import { TestTimers } from "../helpers/test-thread-agent";
import {
  clientMessageId,
  connect,
  type Launch,
  launch,
  launchRequest,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const local = (options: Record<string, unknown>) => ({
  model: { provider: "local", model: "echo", local: options },
});

async function setQuotas(tenantId: string, quotas: Record<string, number | null>): Promise<void> {
  const res = await api(`/v1/operator/tenants/${tenantId}`, {
    method: "PATCH",
    headers: operatorHeaders(),
    body: { quotas },
  });
  expect(res.status, await res.text()).toBe(200);
}

const headersOf = (session: Launch) => ({ Authorization: `Bearer ${session.token}`, Origin: ORIGIN });

function postMessage(session: Launch, text: string) {
  return api(`/v1/threads/${session.threadId}/messages`, {
    method: "POST",
    headers: headersOf(session),
    body: { clientMessageId: clientMessageId(), text },
  });
}

const entriesBody = z.object({ items: z.array(z.object({ role: z.string(), text: z.string() })) });

async function entries(session: Launch) {
  const res = await api(`/v1/threads/${session.threadId}/entries`, { headers: headersOf(session) });
  return (await json(res, 200, entriesBody)).items;
}

/** Runs holding a slot in the tenant's quota object right now. */
function leases(tenantId: string): Promise<number> {
  return inTestQuota(tenantQuota(env, tenantId), (_instance, state) =>
    z.number().parse(state.storage.sql.exec("SELECT COUNT(*) AS n FROM run_leases").one().n),
  );
}

async function refusedWithRetryAfter(res: Response): Promise<void> {
  const retryAfter = Number(res.headers.get("Retry-After"));
  await expectError(res, 429, "quota_exceeded");
  expect(retryAfter).toBeGreaterThan(0);
}

describe("launchesPerDay", () => {
  it("replaces the platform default for the tenant; null clears it back", async () => {
    // Two agents of one tenant, no private reserve: each agent's public launches may use half of the tenant's day.
    const agent = await liveAgent();
    const other = await liveAgent({ tenant: agent });
    await setQuotas(agent.tenantId, { launchesPerDay: 2, privateLaunchReservePercent: 0 });
    expect((await launchRequest({ agentKey: agent.publicKey })).status).toBe(201);
    expect((await launchRequest({ agentKey: other.publicKey })).status).toBe(201);
    const before = await tenantFootprint(agent.tenantId);
    await refusedWithRetryAfter(await launchRequest({ agentKey: agent.publicKey }));
    await refusedWithRetryAfter(await launchRequest({ agentKey: other.publicKey }));
    expect(await tenantFootprint(agent.tenantId)).toEqual(before);

    await setQuotas(agent.tenantId, { launchesPerDay: null });
    expect((await launchRequest({ agentKey: agent.publicKey })).status).toBe(201);
  });
});

describe("launch shares", () => {
  const tenantView = z.object({
    quotas: z.object({
      launchesPerDay: z.number().nullable(),
      privateLaunchReservePercent: z.number().nullable(),
      agentPublicLaunchSharePercent: z.number().nullable(),
    }),
    launchBudget: z.object({
      launchesPerDay: z.number(),
      privateReservePercent: z.number(),
      publicLaunchesPerDay: z.number(),
      agentPublicSharePercent: z.number(),
      agentPublicLaunchesPerDay: z.number(),
    }),
  });
  const readTenant = async (tenantId: string) =>
    json(await api(`/v1/operator/tenants/${tenantId}`, { headers: operatorHeaders() }), 200, tenantView);

  it("shows the private reserve and the per-agent public share, and a one-agent tenant gets what the operator set", async () => {
    const agent = await liveAgent();
    await setQuotas(agent.tenantId, { launchesPerDay: 2 });
    // The defaults, shown as the launches they come to: half of 2 kept for the backend, one public launch.
    expect((await readTenant(agent.tenantId)).launchBudget).toEqual({
      launchesPerDay: 2,
      privateReservePercent: 50,
      publicLaunchesPerDay: 1,
      agentPublicSharePercent: 50,
      agentPublicLaunchesPerDay: 1,
    });
    expect((await launchRequest({ agentKey: agent.publicKey })).status).toBe(201);
    await refusedWithRetryAfter(await launchRequest({ agentKey: agent.publicKey }));

    // The operator gives the tenant's one public agent the whole day.
    await setQuotas(agent.tenantId, { privateLaunchReservePercent: 0, agentPublicLaunchSharePercent: 100 });
    const shown = await readTenant(agent.tenantId);
    expect(shown.quotas).toEqual({
      launchesPerDay: 2,
      privateLaunchReservePercent: 0,
      agentPublicLaunchSharePercent: 100,
    });
    expect(shown.launchBudget).toMatchObject({ publicLaunchesPerDay: 2, agentPublicLaunchesPerDay: 2 });
    expect((await launchRequest({ agentKey: agent.publicKey })).status).toBe(201);
    // Both launches of the day are used now.
    await refusedWithRetryAfter(await launchRequest({ agentKey: agent.publicKey }));
    expect(await tenantQuota(env, agent.tenantId).usage("launches")).toBe(2);

    // null goes back to the defaults.
    await setQuotas(agent.tenantId, {
      privateLaunchReservePercent: null,
      agentPublicLaunchSharePercent: null,
    });
    expect((await readTenant(agent.tenantId)).quotas).toMatchObject({
      privateLaunchReservePercent: null,
      agentPublicLaunchSharePercent: null,
    });
  });

  it("is set and read through the typed operator client", async () => {
    const agent = await liveAgent();
    const operator = new OperatorClient({
      baseUrl: "http://api.test",
      fetch: (input, init) => exports.default.fetch(input, init),
      operatorToken: env.OPERATOR_TOKEN,
    });
    const updated = await operator.updateTenant(agent.tenantId, {
      quotas: { launchesPerDay: 10, privateLaunchReservePercent: 20, agentPublicLaunchSharePercent: 30 },
    });
    expect(updated.launchBudget).toEqual({
      launchesPerDay: 10,
      privateReservePercent: 20,
      publicLaunchesPerDay: 8,
      agentPublicSharePercent: 30,
      agentPublicLaunchesPerDay: 3,
    });
    expect((await operator.getTenant(agent.tenantId)).quotas).toMatchObject({
      privateLaunchReservePercent: 20,
      agentPublicLaunchSharePercent: 30,
    });
  });

  it.each([
    ["a reserve over 100", { privateLaunchReservePercent: 101 }],
    ["a negative reserve", { privateLaunchReservePercent: -1 }],
    ["a fractional reserve", { privateLaunchReservePercent: 12.5 }],
    ["an agent share of 0", { agentPublicLaunchSharePercent: 0 }],
    ["an agent share over 100", { agentPublicLaunchSharePercent: 150 }],
  ])("refuses %s with 400, changing nothing", async (_name, quotas) => {
    const agent = await liveAgent();
    const before = await readTenant(agent.tenantId);
    const res = await api(`/v1/operator/tenants/${agent.tenantId}`, {
      method: "PATCH",
      headers: operatorHeaders(),
      body: { quotas },
    });
    await expectError(res, 400, "bad_request");
    expect(await readTenant(agent.tenantId)).toEqual(before);
  });
});

describe("tokensPerDay", () => {
  it("refuses a send once today's tokens are used up, over HTTP and on a socket, storing nothing", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 3 }) });
    await setQuotas(agent.tenantId, { tokensPerDay: 1 });
    const session = await launch(agent.publicKey);
    const first = await postMessage(session, "count my tokens");
    expect(first.status, await first.text()).toBe(201);
    // The finished run's tokens reach the tenant's counter.
    const used = await waitFor(
      () => tenantQuota(env, agent.tenantId).usage("tokens"),
      (n) => n > 0,
      { what: "the run's tokens counted" },
    );

    await refusedWithRetryAfter(await postMessage(session, "one more"));
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "and over the socket" });
    const refused = await socket.next("error");
    expect(refused.code).toBe("quota_exceeded");
    expect(socket.closed).toBeNull();
    expect((await entries(session)).map((e) => e.role)).toEqual(["user", "assistant"]);
    expect(await tenantQuota(env, agent.tenantId).usage("tokens")).toBe(used);
    expect(await leases(agent.tenantId)).toBe(0);
    socket.ws.close();
  });
});

describe("concurrentThreads", () => {
  it("refuses a run in another thread while the limit's threads are answering, storing nothing", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 10, hangAfterChunks: 2 }) });
    await setQuotas(agent.tenantId, { concurrentThreads: 1 });
    const busy = await launch(agent.publicKey);
    const other = await launch(agent.publicKey);
    const socket = await connect(busy);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "a reply that hangs" });
    const delta = await socket.next("delta", (d) => d.seq === 2);

    await refusedWithRetryAfter(await postMessage(other, "my turn?"));
    const otherSocket = await connect(other);
    otherSocket.send({ type: "send", clientMessageId: clientMessageId(), text: "my turn now?" });
    expect((await otherSocket.next("error")).code).toBe("quota_exceeded");
    expect(await entries(other)).toEqual([]);

    // Cancelled, the run gives its slot back, and the other thread may answer.
    socket.send({ type: "cancel", runId: delta.runId });
    await socket.next("run", (f) => f.runId === delta.runId && f.status === "aborted");
    await waitFor(
      () => leases(agent.tenantId),
      (n) => n === 0,
      { what: "the cancelled run's slot freed" },
    );
    otherSocket.send({ type: "send", clientMessageId: clientMessageId(), text: "my turn at last" });
    const accepted = await otherSocket.next("entry", (f) => f.entry.role === "user");
    expect(accepted.entry.text).toBe("my turn at last");
    socket.ws.close();
    otherSocket.ws.close();
  });

  it("frees the slot of a run that failed", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 5, failAfterChunks: 2 }) });
    await setQuotas(agent.tenantId, { concurrentThreads: 1 });
    const session = await launch(agent.publicKey);
    const failed = await postMessage(session, "this one breaks");
    expect(failed.status).toBe(201);
    expect(((await failed.json()) as { run: { status: string } }).run.status).toBe("failed");
    await waitFor(
      () => leases(agent.tenantId),
      (n) => n === 0,
      { what: "the failed run's slot freed" },
    );
    const next = await postMessage(await launch(agent.publicKey), "another thread");
    expect(next.status).toBe(201);
  });

  it("lets a slot whose holder died lapse when its lease expires", async () => {
    const agent = await liveAgent();
    await setQuotas(agent.tenantId, { concurrentThreads: 1 });
    const quota = tenantQuota(env, agent.tenantId);
    // A thread object that took a slot and died before giving it back.
    expect((await quota.startRun("thr_dead")).ok).toBe(true);
    expect(await quota.startRun("thr_waiting")).toMatchObject({ ok: false, code: "quota_exceeded" });
    await inTestQuota(quota, (instance) => instance.clock.advance(RUN_LEASE_MS));
    expect((await quota.startRun("thr_waiting")).ok).toBe(true);
  });

  it("keeps a long run's slot by renewing its lease until the run gives it back", async () => {
    const agent = await liveAgent();
    await setQuotas(agent.tenantId, { concurrentThreads: 1 });
    const quota = tenantQuota(env, agent.tenantId);
    const timers = new TestTimers();
    const runQuota = tenantRunQuota(
      env,
      { tenantId: agent.tenantId, threadId: "thr_long" },
      { now: () => Date.now(), after: (ms, fn) => timers.after(ms, fn) },
    );
    const slot = await runQuota.acquire();
    expect(slot.ok).toBe(true);
    const expiry = () =>
      inTestQuota(quota, (_instance, state) =>
        z.number().parse(state.storage.sql.exec("SELECT MAX(expires_at) AS e FROM run_leases").one().e),
      );
    const granted = await expiry();

    // Two thirds of the lease later, the renewal comes due.
    await inTestQuota(quota, (instance) => instance.clock.advance((RUN_LEASE_MS * 2) / 3));
    expect(timers.fireAll()).toBe(1);
    await waitFor(expiry, (e) => e > granted, { what: "the renewed lease" });
    // Past the first lease's end, the slot is still held.
    await inTestQuota(quota, (instance) => instance.clock.advance((RUN_LEASE_MS * 2) / 3));
    expect(await quota.startRun("thr_waiting")).toMatchObject({ ok: false, code: "quota_exceeded" });

    if (slot.ok) await slot.value.release(0);
    expect((await quota.startRun("thr_waiting")).ok).toBe(true);
  });
});

describe("a tenant without run quotas", () => {
  it("is asked once per recheck period by a thread, which still counts every run's tokens", async () => {
    const agent = await liveAgent();
    let now = Date.now();
    const runQuota = tenantRunQuota(
      env,
      { tenantId: agent.tenantId, threadId: "thr_chatty" },
      { now: () => now, after: () => () => {} },
    );
    const quota = tenantQuota(env, agent.tenantId);
    const asked = () => inTestQuota(quota, (instance) => instance.calls.startRun);
    const first = await runQuota.acquire();
    expect(await asked()).toBe(1);
    // Nothing to hold a slot for: no lease is written (or given back).
    expect(await leases(agent.tenantId)).toBe(0);
    if (first.ok) await first.value.release(5);
    const second = await runQuota.acquire();
    expect(await asked()).toBe(1);
    if (second.ok) await second.value.release(7);
    expect(await quota.usage("tokens")).toBe(12);

    now += UNLIMITED_RECHECK_MS;
    await runQuota.acquire();
    expect(await asked()).toBe(2);
  });

  it("counts a thread's runs within one window in one call, riding on its next question", async () => {
    const agent = await liveAgent();
    let now = Date.now();
    const marks: (number | null)[] = [];
    const ledger = {
      heldSince: () => null,
      hold: (since: number) => void marks.push(since),
      clear: () => void marks.push(null),
      tokensSince: () => 0,
    };
    const runQuota = tenantRunQuota(
      env,
      { tenantId: agent.tenantId, threadId: "thr_busy" },
      { now: () => now, after: () => () => {} },
      ledger,
    );
    const quota = tenantQuota(env, agent.tenantId);
    const calls = () => inTestQuota(quota, (instance) => ({ ...instance.calls }));
    // The first run after a quiet window is counted at once; the next four are held instead, the time of that count
    // stored once (a thread that dies holding them counts its usage since then as it starts again).
    const countedAt = now;
    for (const tokens of [5, 7, 11, 13, 17]) {
      const slot = await runQuota.acquire();
      if (slot.ok) await slot.value.release(tokens);
      now += 5_000;
    }
    expect(await calls()).toEqual({ startRun: 1, renewRun: 0, endRun: 1 });
    expect(await quota.usage("tokens")).toBe(5);
    expect(marks).toEqual([countedAt]);

    // Past the window the thread asks again, and the held tokens come with the question.
    now += UNLIMITED_RECHECK_MS;
    await runQuota.acquire();
    expect(await calls()).toEqual({ startRun: 2, renewRun: 0, endRun: 1 });
    expect(await quota.usage("tokens")).toBe(5 + 48);
    expect(marks).toEqual([countedAt, null]);
  });

  it("a thread object that dies holding tokens back counts them when it next starts", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const turn = async (text: string) => {
      ws.send({ type: "send", clientMessageId: clientMessageId(), text });
      await ws.next("run", (f) => f.status === "succeeded");
    };
    const quota = tenantQuota(env, agent.tenantId);
    // The first turn is counted at once; the second, within the window, is held back (and its mark stored).
    await turn("first");
    const first = await waitFor(
      () => quota.usage("tokens"),
      (tokens) => tokens > 0,
      { what: "the first turn's tokens" },
    );
    await turn("second");
    const stub = await threadStub(agent, session.threadId);
    const usage = await runInDurableObject(stub, (_instance, state) =>
      z
        .number()
        .parse(state.storage.sql.exec("SELECT SUM(input_tokens + output_tokens) AS n FROM usage").one().n),
    );
    expect(usage).toBeGreaterThan(first);
    expect(await quota.usage("tokens")).toBe(first);

    // Every object dies at once (a deploy, a crash): the held count was only in memory and in the thread's mark.
    await abortAllDurableObjects();
    const again = await connect(session);
    await waitFor(
      () => tenantQuota(env, agent.tenantId).usage("tokens"),
      (tokens) => tokens === usage,
      { what: "the held tokens counted after the restart" },
    );
    again.ws.close();
  });

  it("counts what a thread held back when it died, as it starts again", async () => {
    const agent = await liveAgent();
    const runQuota = tenantRunQuota(
      env,
      { tenantId: agent.tenantId, threadId: "thr_revived" },
      { now: () => Date.now(), after: () => () => {} },
      {
        heldSince: () => 1_000,
        hold: () => {},
        clear: () => {},
        tokensSince: (since) => (since === 1_000 ? 40 : 0),
      },
    );
    await waitFor(
      () => tenantQuota(env, agent.tenantId).usage("tokens"),
      (tokens) => tokens === 40,
      { what: "the held tokens counted" },
    );
    expect(runQuota).toBeDefined();
  });
});
