// B6: the Worker bundle's gzip size from `wrangler deploy --dry-run`, and a thread's cold start: a brand-new thread's
// first `ready` against an already-warm thread's `ready`.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { childEnv, root, wranglerBin } from "../../scripts/lib/paths.mjs";
import { connect, launch } from "../lib/product-client.mjs";
import { summarize } from "../lib/stats.mjs";

export const BUNDLE_BUDGET_BYTES = 450 * 1024;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/** Bytes each package (or the project's own source) contributes to the bundle, largest first, from esbuild's metafile. */
function largestInputs(metafile) {
  let meta;
  try {
    meta = JSON.parse(readFileSync(metafile, "utf8"));
  } catch {
    return null;
  }
  const byPackage = {};
  for (const output of Object.values(meta.outputs ?? {})) {
    for (const [input, info] of Object.entries(output.inputs ?? {})) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = match ? match[1] : input.startsWith("src/") ? "src (this project)" : "other";
      byPackage[key] = (byPackage[key] ?? 0) + (info.bytesInOutput ?? 0);
    }
  }
  return Object.fromEntries(
    Object.entries(byPackage)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12),
  );
}

export async function bundleSize() {
  const outdir = mkdtempSync(join(tmpdir(), "agent-threads-bench-bundle-"));
  try {
    let output = "";
    const code = await new Promise((resolve, reject) => {
      const child = spawn(
        wranglerBin(),
        ["deploy", "--dry-run", "--outdir", outdir, "--metafile", join(outdir, "meta.json")],
        {
          cwd: root,
          env: childEnv({ CI: "true", WRANGLER_SEND_METRICS: "false" }),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      child.stdout.on("data", (d) => {
        output += d;
      });
      child.stderr.on("data", (d) => {
        output += d;
      });
      child.once("error", reject);
      child.once("exit", (exitCode) => resolve(exitCode ?? 1));
    });
    if (code !== 0)
      return { pending: `wrangler deploy --dry-run failed (exit ${code}): ${output.slice(-400)}` };
    // The uploaded modules: JavaScript and WebAssembly, not source maps.
    const modules = files(outdir).filter((f) => /\.(m?js|wasm)$/.test(f));
    const raw = modules.reduce((n, f) => n + statSync(f).size, 0);
    const gzip = modules.reduce((n, f) => n + gzipSync(readFileSync(f), { level: 9 }).length, 0);
    const largest = largestInputs(join(outdir, "meta.json"));
    const reported = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(output);
    return {
      modules: modules.length,
      bytes: raw,
      gzipBytes: gzip,
      budgetBytes: BUNDLE_BUDGET_BYTES,
      largestPackagesBytes: largest,
      ...(reported ? { wranglerReportedKiB: { total: Number(reported[1]), gzip: Number(reported[2]) } } : {}),
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** Per sample: a new thread (object created, pin bound, artifact verified) then the same thread reconnected. */
export async function benchColdStart({ product, agent, samples = 15 }) {
  const cold = [];
  const warm = [];
  for (let i = 0; i < samples; i += 1) {
    const session = await launch(product.baseUrl, agent);
    const first = await connect(session, agent);
    cold.push(first.readyMs);
    first.socket.close();
    const again = await connect(session, agent);
    warm.push(again.readyMs);
    again.socket.close();
  }
  return { samples, newThreadReadyMs: summarize(cold), warmThreadReadyMs: summarize(warm) };
}
