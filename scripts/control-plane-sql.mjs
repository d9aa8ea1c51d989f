#!/usr/bin/env node
// `npm run control-plane:sql -- --prefix <p>`: prints the PostgreSQL control-plane migration for an application to own
// (docs/control-plane.md#owning-the-migration). The text comes from src/storage/postgres/migration.ts, the same
// source the adapter's `migrate()` runs, so the printed migration and the bootstrap never drift apart.
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { root } from "./lib/paths.mjs";

const USAGE = `usage: npm run control-plane:sql -- [--prefix <prefix>]

Prints the canonical PostgreSQL migration of the control plane. Every table, index and constraint name starts with
the prefix (default agent_threads_deploy): a lower-case identifier of at most 30 characters.`;

/** The migration module, compiled from TypeScript in memory and imported. */
export async function loadMigration() {
  const result = await build({
    entryPoints: [join(root, "src", "storage", "postgres", "migration.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].text;
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}

async function main() {
  const { values } = parseArgs({
    options: { prefix: { type: "string" }, help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const migration = await loadMigration();
  const prefix = values.prefix ?? migration.DEFAULT_PREFIX;
  let sql;
  try {
    sql = migration.postgresMigrationSql(prefix);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
  process.stdout.write(sql);
  return 0;
}

if (isMain(import.meta.url)) await runMain(main);
