// Browser-test server: `wrangler dev` on a free port with throwaway secrets and local state (the developer's
// .dev.vars and .wrangler/state are never touched), plus the tenant and agents the tests use.
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, OperatorClient } from "agent-threads/client";
import { D1_BINDINGS } from "../../scripts/lib/d1-bindings.mjs";
import { childEnv, root, wranglerBin } from "../../scripts/lib/paths.mjs";
import { freePort, stopProcessGroup, writeThrowawayVars } from "../../scripts/lib/process-group.mjs";
import { runCommand } from "../../scripts/lib/run-command.mjs";
import { waitForHealth } from "../../scripts/lib/wait-for-health.mjs";

/**
 * The agents the browser tests talk to: `local` echo models, fast and slow, allowed only on 127.0.0.1, plus a
 * private one that only the tenant's backend (here: the test, with the tenant API key) can launch, and one that
 * presents itself (title, greeting, suggested prompts, accent, position).
 */
const AGENTS = {
  fast: { visibility: "public", local: { chunks: 12, chunkDelayMs: 25 } },
  slow: { visibility: "public", local: { chunks: 30, chunkDelayMs: 100 } },
  private: { visibility: "private", local: { chunks: 6, chunkDelayMs: 25 } },
  presented: {
    visibility: "public",
    local: { chunks: 6, chunkDelayMs: 25 },
    presentation: {
      greeting: "Welcome to Acme! Ask us anything.",
      suggestedPrompts: ["Where is my order?", "What are your opening hours?"],
      widget: { title: "Acme help", accentColor: "#0f766e", position: "bottom-left" },
    },
  },
};

/**
 * Creates a `local` agent (the `echo` model unless `model` says `lorem`, with `tools` when given) for the tenant of
 * `token` and releases its version 1 to all development traffic; returns the agent (`id`, `publicKey`, …).
 */
export async function seedAgent(
  baseUrl,
  token,
  { slug, visibility, local, origin, presentation = {}, model = "echo", tools },
) {
  const admin = new AdminClient({ baseUrl, apiKey: token });
  const agent = await admin.agents.create({ slug, name: "Demo agent", visibility, allowedOrigins: [origin] });
  const artifact = {
    schemaVersion: 1,
    name: "Demo agent",
    instructions: "Echo the visitor.",
    model: { provider: "local", model, local },
    ...(tools ? { tools } : {}),
    ...presentation,
  };
  const draft = await admin.drafts.put(agent.id, artifact, 0);
  const version = await admin.versions.publish(agent.id, draft.revision);
  const release = await admin.releases.create(agent.id, {
    environment: "development",
    allocations: [{ version: version.version, weight: 10_000 }],
  });
  await admin.releases.activate(agent.id, release.id);
  return agent;
}

async function seed(baseUrl, operatorToken, origin) {
  const tenant = await new OperatorClient({ baseUrl, operatorToken }).createTenant("Browser tests");
  const token = tenant.apiKey;
  const keys = {};
  for (const [slug, { visibility, local, presentation }] of Object.entries(AGENTS)) {
    const agent = await seedAgent(baseUrl, token, { slug, visibility, local, origin, presentation });
    keys[slug] = agent.publicKey;
  }
  return { apiKey: token, keys, consoleKeys: await consoleKeys(baseUrl, token) };
}

/**
 * The keys the console tests sign in with, apart from the seeding key so that revoking or signing out with them
 * touches nothing else: one `admin`, one `read` (the console shows everything and changes nothing).
 */
async function consoleKeys(baseUrl, token) {
  const admin = new AdminClient({ baseUrl, apiKey: token });
  const adminKey = await admin.apiKeys.create({ name: "Console tests (admin)", scope: "admin" });
  const readKey = await admin.apiKeys.create({ name: "Console tests (read-only)", scope: "read" });
  return { admin: adminKey.apiKey, read: readKey.apiKey };
}

/**
 * Starts the server and seeds it. Returns `{baseUrl, otherOrigin, keys, apiKey, consoleKeys, operatorToken, stop(),
 * restart()}`; `stop()` ends wrangler (its whole process group, which we started) and removes the temporary
 * directory, also after a failure; `restart()` stops wrangler and starts it again on the same port, secrets and
 * persisted state (what a redeploy looks like to the threads: every object gone from memory, its storage kept).
 */
export async function startServer({ log = () => {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "agent-threads-e2e-"));
  const state = join(dir, "state");
  const { varsFile, vars } = writeThrowawayVars(dir, "e2e.vars");
  const logFile = join(dir, "wrangler.log");

  let child;
  const stop = async () => {
    if (child) await stopProcessGroup(child);
    rmSync(dir, { recursive: true, force: true });
  };

  /** `wrangler dev` on `port` over the persisted state; resolves once it answers health. */
  const launchWrangler = async (port, inspector) => {
    const baseUrl = `http://127.0.0.1:${port}`;
    const out = createWriteStream(logFile, { flags: "a" });
    child = spawn(
      wranglerBin(),
      [
        "dev",
        "--ip",
        "127.0.0.1",
        "--port",
        String(port),
        "--inspector-port",
        String(inspector),
        "--persist-to",
        state,
        "--env-file",
        varsFile,
        "--show-interactive-dev-session=false",
      ],
      { cwd: root, env: childEnv({ CI: "true", WRANGLER_SEND_METRICS: "false" }), detached: true },
    );
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    log(`starting wrangler dev on ${baseUrl}…`);
    const running = child;
    try {
      await waitForHealth(baseUrl, { stillRunning: () => running.exitCode === null, timeoutMs: 120_000 });
    } catch (error) {
      await new Promise((resolve) => out.end(resolve));
      const tail = readFileSync(logFile, "utf8").split("\n").slice(-40).join("\n");
      throw new Error(
        `${error instanceof Error ? error.message : error}\n--- wrangler dev output ---\n${tail}`,
      );
    }
    return baseUrl;
  };

  try {
    const wrangler = wranglerBin();
    log("applying D1 migrations to throwaway local databases (the control plane and each projection shard)…");
    for (const binding of D1_BINDINGS) {
      const migrated = await runCommand(
        wrangler,
        ["d1", "migrations", "apply", binding, "--local", "--persist-to", state],
        { env: { CI: "true", WRANGLER_SEND_METRICS: "false" } },
      );
      if (migrated !== 0) throw new Error(`applying D1 migrations to ${binding} failed (exit ${migrated})`);
    }

    const port = await freePort();
    const inspector = await freePort();
    const baseUrl = await launchWrangler(port, inspector);
    const restart = async () => {
      await stopProcessGroup(child);
      await launchWrangler(port, inspector);
    };
    const seeded = await seed(baseUrl, vars.OPERATOR_TOKEN, baseUrl);
    return {
      baseUrl,
      otherOrigin: `http://localhost:${port}`,
      ...seeded,
      operatorToken: vars.OPERATOR_TOKEN,
      logFile,
      stop,
      restart,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
