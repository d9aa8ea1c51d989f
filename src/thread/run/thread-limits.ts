// A thread's limits: the agent version's own where it sets them, the protocol's defaults otherwise.
import { DEFAULT_RUN_TIMEOUT_MS } from "../../control/artifact";
import { LIMITS } from "../../shared/protocol";
import type { ThreadBinding } from "../../storage/thread/pin-store";

/** The prompt budget of an agent that sets no `limits.maxContextTokens`. */
export const DEFAULT_CONTEXT_TOKENS = 32_000;

export interface ThreadLimits {
  maxMessageChars: number;
  sendsPerMinute: number;
  socketsPerThread: number;
  idleTimeoutSeconds: number;
  maxContextTokens: number;
  /** Wall-clock limit of one run: past it the run ends `failed` with reason `timeout`. */
  runTimeoutMs: number;
}

export function threadLimits(binding: ThreadBinding): ThreadLimits {
  const limits = binding.artifact.limits ?? {};
  return {
    maxMessageChars: limits.maxMessageChars ?? LIMITS.maxMessageChars,
    sendsPerMinute: limits.maxSendsPerMinute ?? LIMITS.sendsPerMinute,
    socketsPerThread: limits.maxSocketsPerThread ?? LIMITS.socketsPerThread,
    idleTimeoutSeconds: limits.idleTimeoutSeconds ?? LIMITS.idleTimeoutSeconds,
    maxContextTokens: limits.maxContextTokens ?? DEFAULT_CONTEXT_TOKENS,
    runTimeoutMs: limits.runTimeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
  };
}
