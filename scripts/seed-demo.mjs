// Seeds a demo tenant and a public demo agent (local echo model) over the HTTP API, idempotently.
// Used by `npm run dev`; also runnable alone against a running server: `node scripts/seed-demo.mjs [--port N]`.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { readDevVars } from "./lib/dev-vars.mjs";
import { describeError, request } from "./lib/http-client.mjs";
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

const tenantCreated = z.object({ tenantId: z.string(), apiKey: z.string() });
const agentSchema = z.object({
  id: z.string(),
  slug: z.string(),
  publicKey: z.string(),
  allowedOrigins: z.array(z.string()),
});
const agentList = z.object({ items: z.array(agentSchema), nextCursor: z.string().optional() });
const draftSchema = z.object({ revision: z.number().int() });
const versionSchema = z.object({ version: z.number().int() });
const versionList = z.object({ items: z.array(versionSchema) });
// The shapes docs/api.md and GET /v1/openapi.json document.
const releaseSchema = z.object({ id: z.string(), environment: z.string(), active: z.boolean() });
const releaseList = z.object({ items: z.array(releaseSchema) });

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

/** Parses a response body with a zod schema, or explains which call answered something unexpected. */
function parseResponse(res, status, schema, what) {
  if (res.status !== status) throw new CliError(`${what} failed: ${describeError(res)}`);
  const parsed = schema.safeParse(res.body);
  if (!parsed.success) throw new CliError(`${what} answered an unexpected body: ${parsed.error.message}`);
  return parsed.data;
}

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

  if (state?.agentId !== undefined && state.publicKey !== undefined) {
    const res = await request(baseUrl, "GET", `/v1/agents/${encodeURIComponent(state.agentId)}`, {
      token: state.apiKey,
    });
    if (res.status === 200) {
      await allowPort(
        baseUrl,
        state.apiKey,
        parseResponse(res, 200, agentSchema, "Reading the demo agent"),
        port,
        log,
      );
      return { state, created: false };
    }
  }

  if (state !== null) {
    const res = await request(baseUrl, "GET", "/v1/agents", { token: state.apiKey });
    if (res.status !== 200) state = null; // local state was wiped or the key revoked: start over.
  }

  if (state === null) {
    if (!operatorToken) throw new CliError("OPERATOR_TOKEN is missing from .dev.vars.");
    const res = await request(baseUrl, "POST", "/v1/operator/tenants", {
      token: operatorToken,
      body: { name: "Demo" },
    });
    if (res.status === 401) {
      throw new CliError(
        "the server refused OPERATOR_TOKEN from .dev.vars. Restart `npm run dev` so wrangler reloads .dev.vars.",
      );
    }
    const created = parseResponse(res, 201, tenantCreated, "Creating the demo tenant");
    state = { tenantId: created.tenantId, apiKey: created.apiKey };
    writeDemoState(state, statePath); // saved at once: a later step failing must not strand this tenant.
    log(`created demo tenant ${state.tenantId}`);
  }

  const token = state.apiKey;
  const agent = await ensureAgent(baseUrl, token, port, log);
  const agentPath = `/v1/agents/${encodeURIComponent(agent.id)}`;
  const revision = await ensureDraft(baseUrl, token, agentPath);
  const version = await ensureVersion(baseUrl, token, agentPath, revision);
  await ensureActiveRelease(baseUrl, token, agentPath, environment, version);

  state = { ...state, agentId: agent.id, publicKey: agent.publicKey };
  writeDemoState(state, statePath);
  log(`seeded demo agent ${agent.id} (version ${version}, active in ${environment})`);
  return { state, created: true };
}

/** The demo page is served on this run's port: make sure the demo agent accepts launches from it. */
async function allowPort(baseUrl, token, agent, port, log) {
  const wanted = [`http://localhost:${port}`, `http://127.0.0.1:${port}`];
  const missing = wanted.filter((origin) => !agent.allowedOrigins.includes(origin));
  if (missing.length === 0) return agent;
  const res = await request(baseUrl, "PATCH", `/v1/agents/${encodeURIComponent(agent.id)}`, {
    token,
    body: { allowedOrigins: [...agent.allowedOrigins, ...missing] },
  });
  const updated = parseResponse(res, 200, agentSchema, "Allowing this port on the demo agent");
  log(`allowed ${missing.join(", ")} on the demo agent`);
  return updated;
}

async function ensureAgent(baseUrl, token, port, log) {
  const list = parseResponse(
    await request(baseUrl, "GET", "/v1/agents?limit=200", { token }),
    200,
    agentList,
    "Listing agents",
  );
  const existing = list.items.find((item) => item.slug === DEMO_SLUG);
  if (existing) return allowPort(baseUrl, token, existing, port, log);
  const res = await request(baseUrl, "POST", "/v1/agents", {
    token,
    body: {
      slug: DEMO_SLUG,
      name: DEMO_NAME,
      visibility: "public",
      allowedOrigins: [`http://localhost:${port}`, `http://127.0.0.1:${port}`],
    },
  });
  const agent = parseResponse(res, 201, agentSchema, "Creating the demo agent");
  log(`created demo agent ${agent.id}`);
  return agent;
}

async function ensureDraft(baseUrl, token, agentPath) {
  const current = await request(baseUrl, "GET", `${agentPath}/draft`, { token });
  if (current.status === 200)
    return parseResponse(current, 200, draftSchema, "Reading the demo draft").revision;
  const res = await request(baseUrl, "PUT", `${agentPath}/draft`, {
    token,
    body: demoArtifact,
    headers: { "If-Match": '"0"' },
  });
  return parseResponse(res, 200, draftSchema, "Saving the demo draft").revision;
}

async function ensureVersion(baseUrl, token, agentPath, draftRevision) {
  const list = parseResponse(
    await request(baseUrl, "GET", `${agentPath}/versions`, { token }),
    200,
    versionList,
    "Listing versions",
  );
  if (list.items.length > 0) return Math.max(...list.items.map((item) => item.version));
  const res = await request(baseUrl, "POST", `${agentPath}/versions`, { token, body: { draftRevision } });
  return parseResponse(res, 201, versionSchema, "Publishing the demo version").version;
}

async function ensureActiveRelease(baseUrl, token, agentPath, environment, version) {
  const list = parseResponse(
    await request(baseUrl, "GET", `${agentPath}/releases`, { token }),
    200,
    releaseList,
    "Listing releases",
  );
  if (list.items.some((item) => item.environment === environment && item.active)) return;
  const created = parseResponse(
    await request(baseUrl, "POST", `${agentPath}/releases`, {
      token,
      body: { environment, allocations: [{ version, weight: FULL_WEIGHT }] },
    }),
    201,
    releaseSchema,
    "Creating the demo release",
  );
  const res = await request(
    baseUrl,
    "POST",
    `${agentPath}/releases/${encodeURIComponent(created.id)}/activate`,
    {
      token,
    },
  );
  parseResponse(res, 200, releaseSchema, "Activating the demo release");
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
  const port = values.port ?? process.env.PORT ?? "8787";
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
