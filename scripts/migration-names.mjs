// `node scripts/migration-names.mjs [--check]`: writes the list of D1 migrations the Worker expects applied
// (src/storage/d1/migration-names.ts, read by GET /v1/ready) from migrations/; --check fails when it is stale.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { root } from "./lib/paths.mjs";

export const migrationNamesPath = join(root, "src", "storage", "d1", "migration-names.ts");

/** Migration file names as wrangler records them in `d1_migrations`: every `*.sql` in migrations/, in order. */
export function migrationFiles(dir = join(root, "migrations")) {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sql"))
    .sort();
}

/** The names the generated module holds (whatever its formatting). */
export function bundledNames(text) {
  const list = /MIGRATIONS[^=]*=\s*\[([\s\S]*?)\]/.exec(text);
  if (list === null) return null;
  return [...list[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
}

export function moduleText(names) {
  return [
    "// The D1 migrations this build expects applied, oldest first; GET /v1/ready compares them with d1_migrations.",
    "// Generated from migrations/ by `node scripts/migration-names.mjs`; `npm test` fails when it is stale.",
    "export const MIGRATIONS: readonly string[] = [",
    ...names.map((name) => `  ${JSON.stringify(name)},`),
    "];",
    "",
  ].join("\n");
}

/** Whether the generated module lists exactly the files in migrations/. */
export function migrationNamesFresh() {
  let text;
  try {
    text = readFileSync(migrationNamesPath, "utf8");
  } catch {
    return false;
  }
  return JSON.stringify(bundledNames(text)) === JSON.stringify(migrationFiles());
}

async function main() {
  const { values } = parseArgs({ options: { check: { type: "boolean" } } });
  const shown = relative(root, migrationNamesPath);
  if (values.check) {
    if (!migrationNamesFresh()) {
      throw new CliError(
        `${shown} does not list every file in migrations/: run \`node scripts/migration-names.mjs\`.`,
      );
    }
    console.log(`migration-names: ${shown} lists all ${migrationFiles().length} migrations`);
    return 0;
  }
  writeFileSync(migrationNamesPath, moduleText(migrationFiles()));
  console.log(`wrote ${shown}`);
  return 0;
}

if (isMain(import.meta.url)) await runMain(main);
