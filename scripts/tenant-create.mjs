// `npm run tenant:create -- <name>`: creates a tenant through the operator API and shows its API key once.
import { parseArgs } from "node:util";
import { AgentThreadsError, OperatorClient } from "agent-threads/client";
import { CliError, runMain } from "./lib/cli.mjs";
import { readDevVars } from "./lib/dev-vars.mjs";
import { describeClientError } from "./lib/http-client.mjs";
import { localBaseUrl } from "./lib/local-server.mjs";
import { devVarsPath } from "./lib/paths.mjs";

const HELP = `Usage: npm run tenant:create -- <name> [--remote --url https://agents.example.com]

Local (default): POSTs to the running npm run dev (the port it recorded, or PORT) with OPERATOR_TOKEN from .dev.vars.
Remote: --remote with --url (or AGENT_THREADS_URL) and the OPERATOR_TOKEN environment variable.
Prints the tenant id and its admin API key; the key is shown only this once.`;

function isLoopback(url) {
  return ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

function target(values) {
  if (!values.remote) {
    if (values.url !== undefined)
      throw new CliError("--url needs --remote (local runs use PORT and .dev.vars).");
    const devVars = readDevVars(devVarsPath);
    if (devVars === null) throw new CliError(".dev.vars is missing: run `npm run dev` first to create it.");
    if (!devVars.OPERATOR_TOKEN) throw new CliError("OPERATOR_TOKEN is missing from .dev.vars.");
    return {
      baseUrl: localBaseUrl(),
      token: devVars.OPERATOR_TOKEN,
      local: true,
    };
  }
  const raw = values.url ?? process.env.AGENT_THREADS_URL;
  if (!raw)
    throw new CliError("--remote needs --url https://… (or the AGENT_THREADS_URL environment variable).");
  let url;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`not a URL: ${raw}`);
  }
  if (url.protocol !== "https:" && !isLoopback(url)) {
    throw new CliError("refusing to send the operator token over plain http: use an https:// URL.");
  }
  const token = process.env.OPERATOR_TOKEN;
  if (!token) throw new CliError("--remote needs the OPERATOR_TOKEN environment variable.");
  return { baseUrl: url.origin, token, local: false };
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      remote: { type: "boolean" },
      url: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const name = positionals.join(" ").trim();
  if (name.length === 0) throw new CliError(`a tenant name is required.\n\n${HELP}`);
  if (positionals.length > 1) throw new CliError('give the name as one argument (quote it: "Acme Inc").');

  const { baseUrl, token, local } = target(values);
  let created;
  try {
    created = await new OperatorClient({ baseUrl, operatorToken: token }).createTenant(name);
  } catch (error) {
    if (!(error instanceof AgentThreadsError) || error.status === 0) {
      const hint = local ? " Start it with `npm run dev` (or set PORT)." : "";
      throw new CliError(`no server answers at ${baseUrl} (${describeClientError(error)}).${hint}`);
    }
    if (error.status === 401 || error.status === 403) {
      const where = local
        ? "OPERATOR_TOKEN in .dev.vars (restart `npm run dev` after editing it)"
        : "the OPERATOR_TOKEN variable";
      throw new CliError(
        `the server refused the operator token: check ${where}. (${describeClientError(error)})`,
      );
    }
    throw new CliError(`creating the tenant failed: ${describeClientError(error)}`);
  }

  console.log(`Tenant created at ${baseUrl}`);
  console.log(`  tenantId: ${created.tenantId}`);
  console.log(`  apiKey:   ${created.apiKey}`);
  console.log("The API key is shown only this once: store it in your backend's secret store now.");
  return 0;
}

await runMain(main);
