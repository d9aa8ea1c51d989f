// Runs a child process with inherited output and resolves with its exit code, for scripts that chain commands.
import { spawn } from "node:child_process";
import { childEnv, root } from "./paths.mjs";

/** Resolves with the exit code (128 + n when killed by a signal); rejects only when it cannot start at all. */
export function runCommand(command, args, { env = {}, cwd = root } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(env), stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 + signalNumber(signal) : 1)));
  });
}

/**
 * Like runCommand, with the child's output kept instead of shown: resolves with the exit code and everything it
 * printed, so a caller can summarise a chatty command in one line and show the whole output only when it failed.
 */
export function runQuiet(command, args, { env = {}, cwd = root } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", reject);
    child.on("close", (code, signal) =>
      resolve({ code: code ?? (signal ? 128 + signalNumber(signal) : 1), output }),
    );
  });
}

const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

export function signalNumber(signal) {
  return SIGNALS[signal] ?? 0;
}
