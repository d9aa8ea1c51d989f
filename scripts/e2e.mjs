// `npm run test:e2e`: builds the widget and the client, starts a throwaway `wrangler dev`, seeds agents, drives Debian's Chromium
// through test/e2e/*.test.mjs with node's test runner, and writes test-results/e2e.json for CI's totals.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { parseArgs } from "node:util";
import { buildClient } from "./build-client.mjs";
import { buildConsole } from "./build-console.mjs";
import { buildWidget } from "./build-widget.mjs";
import { CliError, runMain } from "./lib/cli.mjs";
import { root } from "./lib/paths.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HELP = `Usage: npm run test:e2e [-- --only <substring> --serve]

Builds the widget, starts wrangler dev on a free port with throwaway secrets and state, seeds a tenant with
public echo agents, and runs test/e2e/*.test.mjs against it in ${CHROMIUM} (install it with
\`apt-get install -y chromium\`; no browser is ever downloaded). Writes test-results/e2e.json.

  --only <s>   run only the test files whose name contains <s>
  --serve      start and seed the server, print its URLs, and keep it running until Ctrl-C`;

async function main() {
  const { values } = parseArgs({
    options: { only: { type: "string" }, serve: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.serve && !existsSync(CHROMIUM)) {
    throw new CliError(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium).`);
  }
  const manifest = await buildWidget();
  console.log(
    `built widget v${manifest.version} (loader ${manifest.loader.gzipBytes} B, widget ${manifest.widget.gzipBytes} B gzip)`,
  );

  const built = await buildConsole();
  console.log(`built console (first screen ${built.firstScreen.gzipBytes} B gzip)`);

  // The server's seeding and the tests use agent-threads/client: built first, so it is imported only once it exists.
  await buildClient({ types: false });
  const { startServer } = await import("../test/e2e/server.mjs");
  const server = await startServer({ log: (line) => console.log(line) });
  const stopOnSignal = () => void server.stop().then(() => process.exit(130));
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  try {
    if (values.serve) {
      console.log(`\nserving ${server.baseUrl}\n  keys: ${JSON.stringify(server.keys)}`);
      console.log(`  console: ${server.baseUrl}/console/ (keys: ${JSON.stringify(server.consoleKeys)})`);
      console.log(`  demo: ${server.baseUrl}/demo.html?key=${server.keys.fast}\nCtrl-C stops.`);
      await new Promise(() => {});
    }
    const code = await runTests(server, values.only);
    if (code !== 0) printRefusals(server.logFile);
    return code;
  } finally {
    await server.stop();
  }
}

async function runTests(server, only) {
  const dir = join(root, "test", "e2e");
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(".test.mjs") && (only === undefined || name.includes(only)))
    .sort()
    .map((name) => join(dir, name));
  if (files.length === 0) throw new CliError("no browser test files matched.");
  const results = join(root, "test-results");
  mkdirSync(results, { recursive: true });
  Object.assign(process.env, {
    E2E_BASE_URL: server.baseUrl,
    E2E_OTHER_ORIGIN: server.otherOrigin,
    E2E_KEYS: JSON.stringify(server.keys),
    E2E_API_KEY: server.apiKey,
    E2E_CONSOLE_KEYS: JSON.stringify(server.consoleKeys),
    E2E_OPERATOR_TOKEN: server.operatorToken,
    E2E_RESULTS: results,
    CHROMIUM_PATH: CHROMIUM,
  });

  const counts = { passed: 0, failed: 0 };
  const stream = run({ files, concurrency: 1, timeout: 10 * 60_000 });
  const count = (key) => (event) => {
    if (event.details?.type !== "suite") counts[key] += 1;
  };
  stream.on("test:pass", count("passed"));
  stream.on("test:fail", count("failed"));
  const reporter = stream.compose(spec);
  reporter.pipe(process.stdout);
  await new Promise((resolve, reject) => {
    reporter.on("end", resolve);
    reporter.on("error", reject);
  });
  const report = {
    numPassedTests: counts.passed,
    numFailedTests: counts.failed,
    success: counts.failed === 0 && counts.passed > 0,
  };
  writeFileSync(join(results, "e2e.json"), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`browser tests: ${counts.passed} passed, ${counts.failed} failed`);
  return report.success ? 0 : 1;
}

/** After a failure: the server's refused and failed requests (the log is gone once the server stops). */
function printRefusals(logFile) {
  let lines = [];
  try {
    lines = readFileSync(logFile, "utf8").split("\n");
  } catch {
    return;
  }
  const refused = lines.filter(
    (line) => / [45]\d\d [A-Z]/.test(line) || /"level":"(?:warn|error)"/.test(line),
  );
  console.log(`\nthe server's last ${Math.min(refused.length, 80)} refused or failed requests and warnings:`);
  for (const line of refused.slice(-80)) console.log(`  ${line}`);
}

await runMain(main);
