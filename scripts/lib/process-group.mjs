// Throwaway local servers for the browser tests and the benchmarks: a free loopback port, fresh secrets, and a way to
// stop a detached child's whole process group (wrangler and its workerd children).
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { freshSecretValue, parseDevVars } from "./dev-vars.mjs";
import { devVarsExamplePath } from "./paths.mjs";

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** SIGTERM to the child's process group, SIGKILL after 5 s; resolves once it exited (at once if it already had). */
export function stopProcessGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {}
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }, 5000);
  return exited.finally(() => clearTimeout(timer));
}

/** Every secret `.dev.vars.example` names, freshly random, in `<dir>/<name>` (mode 0600). */
export function writeThrowawayVars(dir, name) {
  const varsFile = join(dir, name);
  const names = Object.keys(parseDevVars(readFileSync(devVarsExamplePath, "utf8")));
  const vars = Object.fromEntries(names.map((key) => [key, freshSecretValue(key)]));
  writeFileSync(varsFile, `${names.map((key) => `${key}=${vars[key]}`).join("\n")}\n`, { mode: 0o600 });
  return { varsFile, vars };
}
