// B7: the connect path against a far-away D1. The same server (bench/d1-delay-worker) measured with every D1 call
// delayed by a simulated round trip and with none, interleaved sample by sample: a connect (upgrade → `ready`) of a
// thread already bound, a visitor's resume launch (visitor token + threadId), and a fresh launch (allowed to pay D1).
import { launchPublic } from "agent-threads/client";
import { connect, launch, nextClientAddress } from "../lib/product-client.mjs";
import { summarize } from "../lib/stats.mjs";

export const B7_DELAY_MS = 100;

function resume(baseUrl, agent, session) {
  return launchPublic({
    baseUrl,
    agentKey: agent.publicKey,
    threadId: session.threadId,
    visitorToken: session.visitorToken,
    origin: agent.origin,
    headers: { "CF-Connecting-IP": nextClientAddress() },
  });
}

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export async function benchConnectPath({ server, agent, samples = 30, delayMs = B7_DELAY_MS, log }) {
  const modes = { direct: 0, delayed: delayMs };
  const figures = Object.fromEntries(
    Object.keys(modes).map((mode) => [mode, { connect: [], resume: [], launch: [] }]),
  );
  // Warm-up without delay: JIT, the isolate's caches, the first bind.
  await server.setD1Delay(0);
  for (let i = 0; i < 3; i += 1) {
    const session = await launch(server.baseUrl, agent);
    (await connect(session, agent)).socket.close();
    await resume(server.baseUrl, agent, session);
  }
  for (let i = 0; i < samples; i += 1) {
    // A thread of its own per sample (bound by its first connect, untimed): one visitor resumes it twice at most.
    await server.setD1Delay(0);
    let session = await launch(server.baseUrl, agent);
    (await connect(session, agent)).socket.close();
    // Alternating which mode goes first, so neither always sees the other's after-effects.
    const order = i % 2 === 0 ? ["direct", "delayed"] : ["delayed", "direct"];
    for (const mode of order) {
      await server.setD1Delay(modes[mode]);
      const opened = await timed(() => connect(session, agent));
      opened.value.socket.close();
      figures[mode].connect.push(opened.value.readyMs);
      const resumed = await timed(() => resume(server.baseUrl, agent, session));
      figures[mode].resume.push(resumed.ms);
      session = { ...session, token: resumed.value.token };
      const fresh = await timed(() => launch(server.baseUrl, agent));
      figures[mode].launch.push(fresh.ms);
    }
    if ((i + 1) % 10 === 0) log?.(`  ${i + 1}/${samples}`);
  }
  await server.setD1Delay(0);
  const summary = (mode) => ({
    connectReadyMs: summarize(figures[mode].connect),
    resumeLaunchMs: summarize(figures[mode].resume),
    freshLaunchMs: summarize(figures[mode].launch),
  });
  return { samples, delayMs, direct: summary("direct"), delayed: summary("delayed") };
}
