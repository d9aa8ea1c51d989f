// B13: what holding a socket open and taking turns cost in Durable Object requests and rows, measured on the real
// thread and quota objects in workerd (test/integration/socket-hour-cost.test.ts, which prints the counts).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { binDir, childEnv, root } from "../../scripts/lib/paths.mjs";

const PROBE = "test/integration/socket-hour-cost.test.ts";

/**
 * Runs the probe once and returns its `COST_RESULT` lines by name. It simulates the hour: the thread's clock moves to
 * each socket alarm the object scheduled and the alarm runs through the SDK's scheduler, so every alarm of the hour
 * is counted (not a short window scaled up); 100 turns take a turn every 5 s of the thread's clock.
 */
export async function benchIdleCost({ log }) {
  const child = spawn(join(binDir, "vitest"), ["run", PROBE], {
    cwd: root,
    env: childEnv({ CI: "true" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const code = await new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (exitCode) => resolve(exitCode ?? 1));
  });
  const results = {};
  for (const match of output.matchAll(/COST_RESULT (\{.*\})/g)) {
    const { name, value } = JSON.parse(match[1]);
    results[name] = value;
  }
  if (results.idleSocketHour === undefined || results.quotaCallsPer100Turns === undefined) {
    throw new Error(
      `the cost probe printed no counts (exit ${code}):\n${output.split("\n").slice(-30).join("\n")}`,
    );
  }
  if (code !== 0) log(`  the cost probe's own bounds failed (exit ${code}); its counts are reported anyway`);
  return { ...results, probePassed: code === 0 };
}
