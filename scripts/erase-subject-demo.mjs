// `npm run erase:demo [-- --port 8787 --threads 50]`: against `npm run dev`, a new tenant with two agents and 50
// threads of one subject across them (one turn each), then POST /v1/subject-erasures {subject}; prints the receipt,
// verifies it against /.well-known/jwks.json and its subjectDigest against the tenant's digest key, and scans what is
// left — over HTTP, and in the local D1 database.
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { AdminClient, launchPrivate, OperatorClient } from "agent-threads/client";
import { compactVerify, createRemoteJWKSet } from "jose";
import { CliError, runMain } from "./lib/cli.mjs";
import { readDevVars } from "./lib/dev-vars.mjs";
import { describeClientError, describeError, request } from "./lib/http-client.mjs";
import { localPort } from "./lib/local-server.mjs";
import { childEnv, devVarsPath, root, wranglerBin } from "./lib/paths.mjs";

const HELP = `Usage: npm run erase:demo [-- --port 8787 --threads 50]

Needs \`npm run dev\` running on the port (PORT env or --port, default 8787); reads OPERATOR_TOKEN from .dev.vars.
Creates a tenant, two agents and --threads threads of one subject, erases the subject, prints and verifies the
receipt, and prints the scan: the subject's sessions, each thread and its export over HTTP, and every row of every
table of the local D1 database (\`wrangler d1 execute --local\`).`;

const ARTIFACT = (name) => ({
  schemaVersion: 1,
  name,
  instructions: "You answer briefly.",
  model: { provider: "local", model: "echo", local: { chunks: 2, chunkDelayMs: 5 } },
});

async function step(what, call) {
  try {
    return await call;
  } catch (error) {
    throw new CliError(`${what} failed: ${describeClientError(error)}`);
  }
}

async function releasedAgent(admin, slug, name) {
  const agent = await step(
    `Creating agent ${slug}`,
    admin.agents.create({ slug, name, visibility: "private", allowedOrigins: [] }),
  );
  const draft = await step("Saving the draft", admin.drafts.put(agent.id, ARTIFACT(name), 0));
  const { version } = await step("Publishing", admin.versions.publish(agent.id, draft.revision));
  const release = await step(
    "Creating the release",
    admin.releases.create(agent.id, {
      environment: "development",
      allocations: [{ version, weight: 10_000 }],
    }),
  );
  await step("Activating the release", admin.releases.activate(agent.id, release.id));
  return agent;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A private launch; the per-subject launch limit answers 429 with Retry-After, which is waited out. */
async function launchThread(baseUrl, apiKey, agentId, subject) {
  for (;;) {
    try {
      return await launchPrivate({ baseUrl, apiKey, agentId, subject });
    } catch (error) {
      if (error?.status !== 429) throw new CliError(`Launching failed: ${describeClientError(error)}`);
      const wait = Number(error.retryAfter ?? 5);
      process.stdout.write(`  (launch limit for this subject: waiting ${wait} s)\n`);
      await sleep(Math.max(1, wait) * 1000);
    }
  }
}

async function turn(baseUrl, launch, text) {
  const res = await request(baseUrl, "POST", `/v1/threads/${launch.threadId}/messages`, {
    token: launch.token,
    body: { clientMessageId: crypto.randomUUID(), text },
    timeoutMs: 30_000,
  });
  if (res.status !== 201) throw new CliError(`A turn failed: ${describeError(res)}`);
}

/** Every row of every table of the local D1 database, through wrangler, searched for each needle. */
function scanLocalD1(needles) {
  const run = (sql) => {
    const out = spawnSync(wranglerBin(), ["d1", "execute", "DB", "--local", "--json", "--command", sql], {
      cwd: root,
      env: childEnv(),
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    if (out.status !== 0) throw new CliError(`wrangler d1 execute failed: ${out.stderr.trim().slice(-400)}`);
    return JSON.parse(out.stdout);
  };
  const tables = run(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  )[0].results.map((row) => row.name);
  const results = run(tables.map((name) => `SELECT * FROM "${name}";`).join(" "));
  const hits = [];
  let rows = 0;
  results.forEach((result, index) => {
    for (const row of result.results) {
      rows += 1;
      const text = JSON.stringify(row);
      for (const needle of needles) if (text.includes(needle)) hits.push(`${tables[index]}: ${needle}`);
    }
  });
  return { tables: tables.length, rows, hits };
}

async function main() {
  const { values } = parseArgs({
    options: { port: { type: "string" }, threads: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) return console.log(HELP);
  const port = Number(values.port ?? localPort());
  const count = Number(values.threads ?? "50");
  if (!Number.isInteger(count) || count < 2 || count > 1000) throw new CliError("--threads must be 2–1000.");
  const baseUrl = `http://127.0.0.1:${port}`;
  const operatorToken = readDevVars(devVarsPath)?.OPERATOR_TOKEN;
  if (!operatorToken)
    throw new CliError("OPERATOR_TOKEN is missing from .dev.vars: run `npm run dev` first.");

  const health = await request(baseUrl, "GET", "/v1/health");
  if (health.status !== 200)
    throw new CliError(`the server on ${baseUrl} is not healthy: ${describeError(health)}`);

  const operator = new OperatorClient({ baseUrl, operatorToken });
  const tenant = await step(
    "Creating the tenant",
    operator.createTenant(`Erasure demo ${new Date().toISOString()}`),
  );
  const admin = new AdminClient({ baseUrl, apiKey: tenant.apiKey });
  const agents = [
    await releasedAgent(admin, "support", "Support"),
    await releasedAgent(admin, "billing", "Billing"),
  ];
  console.log(`tenant ${tenant.tenantId}, agents ${agents.map((a) => a.id).join(", ")}`);

  const subject = `customer-${crypto.randomUUID()}`;
  const texts = [];
  const threadIds = [];
  for (let n = 0; n < count; n++) {
    const agent = agents[n % agents.length];
    const launch = await launchThread(baseUrl, tenant.apiKey, agent.id, subject);
    const text = `order ${n} for ${crypto.randomUUID()}`;
    await turn(baseUrl, launch, text);
    texts.push(text);
    threadIds.push(launch.threadId);
    if ((n + 1) % 10 === 0) console.log(`  ${n + 1} threads of ${subject}`);
  }

  const before = scanLocalD1([subject, ...texts]);
  console.log(`before erasure: local D1 holds the subject or its text in ${before.hits.length} places`);

  const started = Date.now();
  let erased;
  for (let calls = 1; ; calls++) {
    erased = await step("Erasing the subject", admin.subjects.erase(subject));
    if (erased.status === "pending") {
      console.log(`  call ${calls}: 202, ${erased.remaining} threads remaining`);
      continue;
    }
    console.log(`erased ${erased.threadIds.length} threads in ${Date.now() - started} ms (${calls} call(s))`);
    break;
  }
  const { id, receipt } = erased;
  console.log(`\nreceipt ${id}:\n${receipt}\n`);

  const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", baseUrl));
  const { payload, protectedHeader } = await compactVerify(receipt, jwks);
  const claims = JSON.parse(new TextDecoder().decode(payload));
  console.log(
    `receipt verified against ${baseUrl}/.well-known/jwks.json (alg ${protectedHeader.alg}, kid ${protectedHeader.kid}):`,
  );
  console.log(
    `  id ${claims.id}, tenant ${claims.tenantId}, scope ${JSON.stringify(claims.scope)}, ${claims.threadIds.length} threads, erased at ${claims.erasedAt}`,
  );
  const missing = threadIds.filter((threadId) => !claims.threadIds.includes(threadId));
  if (missing.length > 0) throw new CliError(`the receipt does not name ${missing.length} of the threads.`);
  // The receipt names the subject only as an HMAC under the tenant's key: recomputed here from the subject id.
  const { key } = await step("Reading the subject digest key", admin.subjects.digestKey());
  const hmac = await crypto.subtle.importKey(
    "raw",
    Buffer.from(key, "base64url"),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const digest = Buffer.from(
    await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(subject)),
  ).toString("base64url");
  if (claims.subjectDigest !== digest)
    throw new CliError("the receipt's subjectDigest is not HMAC(key, subject).");
  console.log(`  subjectDigest ${claims.subjectDigest} = HMAC-SHA-256(tenant key, "${subject}")`);

  // The scan, over HTTP.
  const list = await request(baseUrl, "POST", "/v1/sessions/search", {
    token: tenant.apiKey,
    body: { subject },
  });
  const problems = [];
  if (list.status !== 200 || list.body.items.length !== 0) problems.push("the subject still lists sessions");
  for (const threadId of threadIds) {
    for (const path of ["", "/export"]) {
      const res = await request(baseUrl, "GET", `/v1/sessions/${threadId}${path}`, { token: tenant.apiKey });
      if (res.status !== 404) problems.push(`GET /v1/sessions/${threadId}${path} answered ${res.status}`);
    }
  }
  const kept = await request(baseUrl, "GET", `/v1/erasures/${id}`, { token: tenant.apiKey });
  if (kept.status !== 200 || kept.body.receipt !== receipt)
    problems.push("GET /v1/erasures/:id lost the receipt");
  if (JSON.stringify(kept.body).includes(subject)) problems.push("the kept receipt names the subject");
  console.log(
    `scan over HTTP: sessions of the subject ${list.body.items?.length ?? "?"}, ${threadIds.length * 2} thread and export reads all 404: ${problems.length === 0 ? "clean" : "NOT CLEAN"}`,
  );

  const after = scanLocalD1([subject, ...texts]);
  console.log(
    `scan of local D1: ${after.tables} tables, ${after.rows} rows read, ${after.hits.length} mentions of the subject or its text${after.hits.length > 0 ? `:\n  ${after.hits.slice(0, 20).join("\n  ")}` : ""}`,
  );
  problems.push(...after.hits.map((hit) => `local D1 ${hit}`));
  if (problems.length > 0) throw new CliError(`the erasure left traces:\n  ${problems.join("\n  ")}`);
  console.log("\nresult: nothing of the subject is left (receipt verified, HTTP and D1 scans clean).");
}

runMain(main);
