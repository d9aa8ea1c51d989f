// What an open, idle socket costs its thread per hour and what 100 turns cost the tenant's quota object, measured on
// the real objects (docs/scaling.md): the bench (bench/scenarios/b13-idle-cost.mjs) runs this file and reads the
// `COST_RESULT` lines it prints.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantQuota } from "../../src/auth/tenant-quota";
import type { ThreadAgent } from "../../src/objects/thread-agent";
import { threadStub } from "../helpers/projection";
import { inTestQuota } from "../helpers/test-tenant-quota";
import { inTestThread } from "../helpers/test-thread-agent";
import { clientMessageId, connect, launch, liveAgent } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const HOUR_MS = 3_600_000;
const SOCKET_CALLBACK = "sweepIdleConnections";

/** The thread's next socket alarm (epoch ms of real time), as the SDK's scheduler holds it. */
function nextSocketAlarm(stub: DurableObjectStub<ThreadAgent>): Promise<number | null> {
  return runInDurableObject(stub, (instance: ThreadAgent) => {
    const times = instance
      .getSchedules()
      .filter((s) => s.callback === SOCKET_CALLBACK)
      .map((s) => s.time * 1000);
    return times.length === 0 ? null : Math.min(...times);
  });
}

function report(name: string, value: unknown): void {
  console.log(`COST_RESULT ${JSON.stringify({ name, value })}`);
}

describe("cost of holding a socket open and of turns", () => {
  it("an idle socket held open for an hour: the thread's alarms and rows written", async () => {
    // An idle timeout past the hour, so the socket stays open, idle, for the whole of it.
    const agent = await liveAgent({ artifact: { limits: { idleTimeoutSeconds: 7_200 } } });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const stub = await threadStub(agent, session.threadId);
    await waitFor(
      () => nextSocketAlarm(stub),
      (at) => at !== null,
      { what: "the socket alarm armed by the connect" },
    );

    // Each step moves the object's clock to its next socket alarm, makes that job due in real time and runs the
    // object's real alarm (the SDK's scheduler included), counting what its storage writes.
    let simulatedMs = 0;
    let alarms = 0;
    let rowsWritten = 0;
    const byTable: Record<string, number> = {};
    for (;;) {
      const at = await nextSocketAlarm(stub);
      if (at === null) break;
      const delayMs = Math.max(0, at - Date.now());
      if (simulatedMs + delayMs > HOUR_MS) break;
      simulatedMs += delayMs;
      await runInDurableObject(stub, (instance: ThreadAgent, state) => {
        (instance as unknown as { clock: { advance(ms: number): void } }).clock.advance(delayMs);
        state.storage.sql.exec(
          "UPDATE cf_agents_jobs SET time = ? WHERE fn = ?",
          Date.now(),
          SOCKET_CALLBACK,
        );
      });
      await inTestThread(stub, (instance) => instance.meter.start());
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      const count = await inTestThread(stub, (instance) => instance.meter.stop());
      alarms += 1;
      rowsWritten += count.rowsWritten;
      for (const [table, rows] of Object.entries(count.byTable))
        byTable[table] = (byTable[table] ?? 0) + rows;
    }
    expect(ws.closed).toBeNull();
    // Every alarm due within the simulated hour ran: these are the hour's counts, not a scaled sample.
    report("idleSocketHour", { alarmsPerHour: alarms, rowsWrittenPerHour: rowsWritten, byTable });
    // One wake per standing recheck (5 min) after the first look: the SDK's job rows and its alarm settings only.
    expect(alarms).toBeLessThanOrEqual(14);
    expect(rowsWritten).toBeLessThanOrEqual(100);
    ws.ws.close();
  });

  it("100 turns on one thread: calls to the tenant's quota object", async () => {
    const agent = await liveAgent({ artifact: { limits: { maxSendsPerMinute: 1000 } } });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const quota = tenantQuota(env, agent.tenantId);
    const before = await inTestQuota(quota, (instance) => ({ ...instance.calls }));
    const stub = await threadStub(agent, session.threadId);
    for (let i = 0; i < 100; i += 1) {
      // The visitor's frame budget refills with the object's clock: a user typing, not a script.
      await inTestThread(stub, (instance) => instance.clock.advance(5_000));
      ws.send({ type: "send", clientMessageId: clientMessageId(), text: `turn ${i}` });
      await ws.next("run", (f) => f.status === "succeeded");
    }
    const after = await inTestQuota(quota, (instance) => ({ ...instance.calls }));
    const calls = {
      startRun: after.startRun - before.startRun,
      renewRun: after.renewRun - before.renewRun,
      endRun: after.endRun - before.endRun,
    };
    report("quotaCallsPer100Turns", { ...calls, total: calls.startRun + calls.renewRun + calls.endRun });
    ws.ws.close();
  });
});
