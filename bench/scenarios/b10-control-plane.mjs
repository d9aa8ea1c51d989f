// B10: the control plane over HTTP (docs/control-plane.md). Two product Workers side by side, one on D1 and one with
// CONTROL_PLANE=http to the control-plane service over a local PostgreSQL: launch p50 (alternating, one in flight)
// and connect → ready of an already bound thread, whose pin lives in the thread object in both.
import { spawn } from "node:child_process";
import { buildControlPlane } from "../../scripts/control-plane.mjs";
import { ensureLocalPostgres } from "../../scripts/lib/local-postgres.mjs";
import { freePort } from "../../scripts/lib/process-group.mjs";
import { randomSecret } from "../../scripts/lib/random-secret.mjs";
import { connect, launch } from "../lib/product-client.mjs";
import { seedBenchAgent } from "../lib/seed.mjs";
import { startProductWorker } from "../lib/servers.mjs";
import { summarize } from "../lib/stats.mjs";

/** The service on a free port over the local PostgreSQL, under a table prefix of its own (migrated at start). */
async function startService(log) {
  const database = await ensureLocalPostgres({ log });
  const keys = JSON.stringify({ current: "w1", keys: { w1: randomSecret() } });
  const port = await freePort();
  const child = spawn(process.execPath, [await buildControlPlane()], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      CONTROL_PLANE_KEYS: keys,
      PORT: String(port),
      CONTROL_PLANE_MIGRATE: "1",
      CONTROL_PLANE_PREFIX: `bench_${randomSecret(6)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, "")}`,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${url}/ready`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the service did not become ready on ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    keys,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((resolve) => child.once("exit", resolve));
      }
      database.stop();
    },
  };
}

export async function benchControlPlane({ d1, log, samples = 200, threads = 30 }) {
  const service = await startService(log);
  let http = null;
  try {
    http = await startProductWorker({
      log,
      extraArgs: [
        "--var",
        "CONTROL_PLANE:http",
        "--var",
        `CONTROL_PLANE_URL:${service.url}`,
        "--var",
        `CONTROL_PLANE_TOKEN:${service.keys}`,
      ],
    });
    const workers = {
      d1: { server: d1, agent: await seedBenchAgent(d1.baseUrl, d1.operatorToken) },
      http: { server: http, agent: await seedBenchAgent(http.baseUrl, http.operatorToken) },
    };
    const launchMs = { d1: [], http: [] };
    const readyMs = { d1: [], http: [] };
    let failures = 0;
    for (const { server, agent } of Object.values(workers)) {
      for (let i = 0; i < 20; i++) await launch(server.baseUrl, agent); // warm-up
    }
    for (let i = 0; i < samples; i++) {
      for (const name of ["d1", "http"]) {
        const { server, agent } = workers[name];
        const t0 = performance.now();
        try {
          await launch(server.baseUrl, agent);
          launchMs[name].push(performance.now() - t0);
        } catch {
          failures++;
        }
      }
    }
    // Bound threads: the first connection binds (assignThread), the measured one finds the pin in the object.
    for (let i = 0; i < threads; i++) {
      for (const name of ["d1", "http"]) {
        const { server, agent } = workers[name];
        const session = await launch(server.baseUrl, agent);
        const first = await connect(session, agent);
        first.socket.close();
        const again = await connect(session, agent);
        readyMs[name].push(again.readyMs);
        again.socket.close();
      }
    }
    return {
      launch: { d1: summarize(launchMs.d1), http: summarize(launchMs.http) },
      boundReady: { d1: summarize(readyMs.d1), http: summarize(readyMs.http) },
      failures,
    };
  } finally {
    await http?.stop();
    await service.stop();
  }
}
