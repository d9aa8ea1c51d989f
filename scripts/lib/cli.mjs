// How every script fails: one clear line on stderr and a non-zero exit, never a stack trace.
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** An expected failure whose message is meant for the person at the terminal. */
export class CliError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/** Runs a script's main function and turns any failure into `error: …` plus an exit code. */
export async function runMain(main) {
  try {
    const code = await main();
    if (typeof code === "number") process.exitCode = code;
  } catch (error) {
    if (error instanceof CliError) {
      console.error(`error: ${error.message}`);
      process.exitCode = error.exitCode;
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    const usage = error instanceof Error && String(error.code ?? "").startsWith("ERR_PARSE_ARGS");
    console.error(`error: ${message}${usage ? " (see --help)" : ""}`);
    if (process.env.DEBUG && error instanceof Error) console.error(error.stack);
    process.exitCode = 1;
  }
}

/** Whether this module is the script node was started with (as opposed to being imported). */
export function isMain(importMetaUrl) {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(fileURLToPath(importMetaUrl)) === realpathSync(resolve(entry));
  } catch {
    return false;
  }
}
