#!/usr/bin/env node
// `npm run control-plane`: bundles src/control-plane/main.ts for Node (packages stay external) into .tmp/ and runs it,
// so the service needs no TypeScript loader. Env: DATABASE_URL, CONTROL_PLANE_KEYS, PORT (docs/control-plane.md).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { build } from "esbuild";
import { root } from "./lib/paths.mjs";

export const SERVICE_BUNDLE = join(root, ".tmp", "control-plane", "main.mjs");

/** Builds the service into SERVICE_BUNDLE; returns its path. */
export async function buildControlPlane() {
  await build({
    entryPoints: [join(root, "src", "control-plane", "main.ts")],
    outfile: SERVICE_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return SERVICE_BUNDLE;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bundle = await buildControlPlane();
  const child = spawn(process.execPath, [bundle], { stdio: "inherit", env: process.env });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
