// Seeds a demo tenant and a public demo agent (local echo model) through agent-threads/client, idempotently.
// Used by `npm run dev`; also runnable alone against a running server: `node scripts/seed-demo.mjs [--port N]`.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { parseArgs } from "node:util";
import { AdminClient, AgentThreadsError, OperatorClient } from "agent-threads/client";
import { z } from "zod";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { readDevVars } from "./lib/dev-vars.mjs";
import { describeClientError, describeError, request } from "./lib/http-client.mjs";
import { localPort } from "./lib/local-server.mjs";
import { demoStatePath, devVarsPath } from "./lib/paths.mjs";

const DEMO_SLUG = "demo";
const DEMO_NAME = "Demo agent";
const FULL_WEIGHT = 10_000;

export const demoArtifact = {
  schemaVersion: 1,
  name: DEMO_NAME,
  instructions: "You are a friendly demo agent.",
  greeting: "Hi! Ask me anything.",
  model: { provider: "local", model: "echo", local: { chunks: 12, chunkDelayMs: 40 } },
};

const demoStateSchema = z.object({
  tenantId: z.string().min(1),
  apiKey: z.string().min(1),
  agentId: z.string().min(1).optional(),
  publicKey: z.string().min(1).optional(),
});

/** Reads .wrangler/demo.json; a missing or unreadable file means "nothing seeded yet". */
export function readDemoState(path = demoStatePath) {
  try {
    const parsed = demoStateSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function writeDemoState(state, path) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** Awaits one API call, or explains which call failed and how. */
async function step(what, call) {
  try {
    return await call;
  } catch (error) {
    throw new CliError(`${what} failed: ${describeClientError(error)}`);
  }
}

/** An answer from the server that says "no" (as opposed to no server at all). */
const refused = (error) => error instanceof AgentThreadsError && error.status !== 0;

/**
 * Makes sure the demo tenant, agent, draft, version and an active release exist, and returns the saved state plus
 * whether anything was created. A complete, still-valid .wrangler/demo.json is a no-op; a partial one (an earlier
 * run stopped half-way) is resumed with the same tenant, so restarts never pile up demo tenants.
 */
export async function seedDemo({
  baseUrl,
  operatorToken,
  port,
  environment = "development",
  statePath = demoStatePath,
  log = () => {},
}) {
  let state = readDemoState(statePath);
  let admin = state === null ? null : new AdminClient({ baseUrl, apiKey: state.apiKey });

  if (admin !== null && state?.agentId !== undefined && state.publicKey !== undefined) {
    const agent = await admin.agents.get(state.agentId).catch((error) => {
      if (refused(error)) return null;
      throw new CliError(`Reading the demo agent failed: ${describeClientError(error)}`);
    });
    if (agent !== null) {
      await allowPort(admin, agent, port, log);
      return { state, created: false };
    }
  }

  if (admin !== null) {
    const usable = await admin.agents.list({ limit: 1 }).then(
      () => true,
      (error) => {
        if (refused(error)) return false; // local state was wiped or the key revoked: start over.
        throw new CliError(`Listing agents failed: ${describeClientError(error)}`);
      },
    );
    if (!usable) {
      state = null;
      admin = null;
    }
  }

  if (state === null || admin === null) {
    if (!operatorToken) throw new CliError("OPERATOR_TOKEN is missing from .dev.vars.");
    const operator = new OperatorClient({ baseUrl, operatorToken });
    const created = await operator.createTenant("Demo").catch((error) => {
      if (error instanceof AgentThreadsError && error.status === 401) {
        throw new CliError(
          "the server refused OPERATOR_TOKEN from .dev.vars. Restart `npm run dev` so wrangler reloads .dev.vars.",
        );
      }
      throw new CliError(`Creating the demo tenant failed: ${describeClientError(error)}`);
    });
    state = { tenantId: created.tenantId, apiKey: created.apiKey };
    writeDemoState(state, statePath); // saved at once: a later step failing must not strand this tenant.
    admin = new AdminClient({ baseUrl, apiKey: state.apiKey });
    log(`created demo tenant ${state.tenantId}`);
  }

  const agent = await ensureAgent(admin, port, log);
  const revision = await ensureDraft(admin, agent.id);
  const version = await ensureVersion(admin, agent.id, revision);
  await ensureActiveRelease(admin, agent.id, environment, version);

  state = { ...state, agentId: agent.id, publicKey: agent.publicKey };
  writeDemoState(state, statePath);
  log(`seeded demo agent ${agent.id} (version ${version}, active in ${environment})`);
  return { state, created: true };
}

/** The demo page is served on this run's port: make sure the demo agent accepts launches from it. */
async function allowPort(admin, agent, port, log) {
  const wanted = [`http://localhost:${port}`, `http://127.0.0.1:${port}`];
  const missing = wanted.filter((origin) => !agent.allowedOrigins.includes(origin));
  if (missing.length === 0) return agent;
  const updated = await step(
    "Allowing this port on the demo agent",
    admin.agents.update(agent.id, { allowedOrigins: [...agent.allowedOrigins, ...missing] }),
  );
  log(`allowed ${missing.join(", ")} on the demo agent`);
  return updated;
}

async function ensureAgent(admin, port, log) {
  const list = await step("Listing agents", admin.agents.list({ limit: 200 }));
  const existing = list.items.find((item) => item.slug === DEMO_SLUG);
  if (existing) return allowPort(admin, existing, port, log);
  const agent = await step(
    "Creating the demo agent",
    admin.agents.create({
      slug: DEMO_SLUG,
      name: DEMO_NAME,
      visibility: "public",
      allowedOrigins: [`http://localhost:${port}`, `http://127.0.0.1:${port}`],
    }),
  );
  log(`created demo agent ${agent.id}`);
  return agent;
}

async function ensureDraft(admin, agentId) {
  const current = await admin.drafts.get(agentId).catch((error) => {
    if (error instanceof AgentThreadsError && error.code === "not_found") return null;
    throw new CliError(`Reading the demo draft failed: ${describeClientError(error)}`);
  });
  if (current !== null) return current.revision;
  return (await step("Saving the demo draft", admin.drafts.put(agentId, demoArtifact, 0))).revision;
}

async function ensureVersion(admin, agentId, draftRevision) {
  const list = await step("Listing versions", admin.versions.list(agentId));
  if (list.items.length > 0) return Math.max(...list.items.map((item) => item.version));
  return (await step("Publishing the demo version", admin.versions.publish(agentId, draftRevision))).version;
}

async function ensureActiveRelease(admin, agentId, environment, version) {
  const list = await step("Listing releases", admin.releases.list(agentId));
  if (list.items.some((item) => item.environment === environment && item.active)) return;
  const created = await step(
    "Creating the demo release",
    admin.releases.create(agentId, { environment, allocations: [{ version, weight: FULL_WEIGHT }] }),
  );
  await step("Activating the demo release", admin.releases.activate(agentId, created.id));
}

async function main() {
  const { values } = parseArgs({
    options: { port: { type: "string" }, url: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log("Usage: node scripts/seed-demo.mjs [--port 8787 | --url http://localhost:8787]");
    console.log("Seeds the demo tenant and agent into a running local server (idempotent).");
    return 0;
  }
  const port = values.port ?? String(localPort());
  const baseUrl = values.url ?? `http://127.0.0.1:${port}`;
  const devVars = readDevVars(devVarsPath);
  if (devVars === null) throw new CliError(".dev.vars is missing: run `npm run dev` once to create it.");
  const health = await request(baseUrl, "GET", "/v1/health");
  if (health.status !== 200) throw new CliError(`${baseUrl}/v1/health answered ${describeError(health)}`);
  const environment = typeof health.body?.environment === "string" ? health.body.environment : "development";
  const { state, created } = await seedDemo({
    baseUrl,
    operatorToken: devVars.OPERATOR_TOKEN,
    port: new URL(baseUrl).port || port,
    environment,
    log: (line) => console.log(line),
  });
  console.log(created ? "Demo seeded." : "Demo already seeded.");
  console.log(`  Demo agent public key: ${state.publicKey}`);
  console.log(`  Tenant API key:        ${relative(process.cwd(), demoStatePath)}`);
  return 0;
}

if (isMain(import.meta.url)) await runMain(main);
