// `npm run eval -- --agent <id> --suite <id> (--draft | --version N) [--repeats N] [--timeout S] [--json]`: runs an
// eval suite against a deployment (AGENT_THREADS_URL, AGENT_THREADS_API_KEY), prints a table of cases, and exits 1
// when any case failed (docs/evals.md#in-ci), 2 when the run could not be made or read.
import { parseArgs } from "node:util";
import { AdminClient } from "agent-threads/client";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { describeClientError } from "./lib/http-client.mjs";

const HELP = `Usage: npm run eval -- --agent <agentId> --suite <suiteId> (--draft | --version N) [--repeats 1-5]
                       [--timeout 600] [--json]

Runs the suite against the agent's current draft (--draft) or a published version (--version N) on the deployment
at AGENT_THREADS_URL with the tenant key AGENT_THREADS_API_KEY, waits for the run, and prints one row per case.
Exit code: 0 every case passed, 1 some case failed, 2 the run could not be started or read.`;

const POLL_MS = 1000;

/** One row per case execution: its result, what failed first, tokens and time. */
export function resultTable(run) {
  const rows = run.cases.map((c) => [
    c.caseId,
    String(c.repeat + 1),
    c.passed ? "pass" : "FAIL",
    c.failures.map((f) => (f.index >= 0 ? `#${f.index} ${f.type}` : f.type)).join(", ") || "-",
    String(c.tokens.input + c.tokens.output),
    String(c.durationMs),
  ]);
  const header = ["case", "try", "result", "failing expectations", "tokens", "ms"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

function summary(run) {
  const rate = run.passRate === null ? "-" : `${(run.passRate * 100).toFixed(1)}%`;
  const target =
    "version" in run.target ? `version ${run.target.version}` : `draft revision ${run.target.draftRevision}`;
  return [
    `run ${run.id}: ${run.passed}/${run.total} passed (${rate}) on ${target}, suite revision ${run.suiteRevision}`,
    `artifact ${run.artifactDigest}; tokens in ${run.tokens.input}, out ${run.tokens.output}; ${run.durationMs ?? "-"} ms`,
  ].join("\n");
}

async function main() {
  const { values } = parseArgs({
    options: {
      agent: { type: "string" },
      suite: { type: "string" },
      draft: { type: "boolean" },
      version: { type: "string" },
      repeats: { type: "string" },
      timeout: { type: "string", default: "600" },
      json: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const baseUrl = process.env.AGENT_THREADS_URL;
  const apiKey = process.env.AGENT_THREADS_API_KEY;
  if (!baseUrl || !apiKey) throw new CliError("set AGENT_THREADS_URL and AGENT_THREADS_API_KEY", 2);
  if (!values.agent || !values.suite) throw new CliError("--agent and --suite are required (see --help)", 2);
  if (Boolean(values.draft) === (values.version !== undefined)) {
    throw new CliError("give exactly one of --draft or --version N", 2);
  }
  const admin = new AdminClient({ baseUrl, apiKey });
  const call = async (what, promise) => {
    try {
      return await promise;
    } catch (error) {
      throw new CliError(`${what}: ${describeClientError(error)}`, 2);
    }
  };
  let target;
  if (values.draft) {
    const draft = await call("reading the draft", admin.drafts.get(values.agent));
    target = { draftRevision: draft.revision };
  } else {
    const version = Number(values.version);
    if (!Number.isInteger(version) || version < 1)
      throw new CliError("--version must be a positive integer", 2);
    target = { version };
  }
  const repeats = values.repeats === undefined ? undefined : Number(values.repeats);
  const { runId } = await call(
    "starting the run",
    admin.evals.startRun(values.agent, values.suite, {
      target,
      ...(repeats !== undefined ? { repeats } : {}),
    }),
  );
  const deadline = Date.now() + Number(values.timeout) * 1000;
  let run;
  for (;;) {
    run = await call("reading the run", admin.evals.run(values.agent, values.suite, runId));
    if (run.status === "completed" || run.status === "failed") break;
    if (Date.now() > deadline)
      throw new CliError(`run ${runId} did not finish within ${values.timeout} s`, 2);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  if (values.json) console.log(JSON.stringify(run, null, 2));
  else console.log(`${resultTable(run)}\n\n${summary(run)}`);
  return run.status === "completed" && run.failed === 0 ? 0 : 1;
}

if (isMain(import.meta.url)) runMain(main);
