// `npm run openapi:check` against a running `npm run dev`: generates TypeScript types from GET /v1/openapi.json with
// openapi-typescript, type-checks a small openapi-fetch program against them and runs it (CI runs this).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import openapiTS, { astToString } from "openapi-typescript";
import { CliError, runMain } from "./lib/cli.mjs";
import { localBaseUrl } from "./lib/local-server.mjs";
import { binDir, childEnv, root } from "./lib/paths.mjs";
import { readDemoState } from "./seed-demo.mjs";

const work = join(root, ".tmp", "openapi-client");

async function main() {
  const { values } = parseArgs({ options: { url: { type: "string" } } });
  const base = values.url ?? localBaseUrl();
  const res = await fetch(`${base}/v1/openapi.json`);
  if (!res.ok) throw new CliError(`GET /v1/openapi.json answered ${res.status}`);
  const contract = await res.json();

  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, "api.d.ts"), astToString(await openapiTS(contract)));
  copyFileSync(join(root, "scripts", "openapi-client", "program.ts"), join(work, "program.ts"));
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2022", "DOM"],
        module: "ESNext",
        moduleResolution: "Bundler",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      files: ["program.ts", "api.d.ts", "env.d.ts"],
    }),
  );
  writeFileSync(
    join(work, "env.d.ts"),
    "declare const process: { env: Record<string, string | undefined> };\n",
  );
  const checked = spawnSync(join(binDir, "tsc"), ["-p", work], { encoding: "utf8", env: childEnv() });
  if (checked.status !== 0) {
    throw new CliError(`the typed program does not compile against the generated types:\n${checked.stdout}`);
  }

  await build({
    entryPoints: [join(work, "program.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: join(work, "program.mjs"),
    logLevel: "silent",
  });
  const apiKey = readDemoState()?.apiKey;
  if (!apiKey) throw new CliError("no demo tenant key in .wrangler/demo.json: is `npm run dev` running?");
  const ran = spawnSync(process.execPath, [join(work, "program.mjs")], {
    encoding: "utf8",
    env: { ...process.env, BASE_URL: base, API_KEY: apiKey },
  });
  if (ran.status !== 0) throw new CliError(`the typed program failed:\n${ran.stderr || ran.stdout}`);
  process.stdout.write(ran.stdout);
  console.log("openapi: types generated with openapi-typescript; the typed program compiled and ran");
  return 0;
}

await runMain(main);
