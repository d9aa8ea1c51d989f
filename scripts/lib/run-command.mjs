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

const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

export function signalNumber(signal) {
  return SIGNALS[signal] ?? 0;
}
