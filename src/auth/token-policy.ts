// Token lifetimes per environment: defaults from docs/security.md, overridable by Worker vars.
export interface TokenPolicy {
  issuer: string;
  audience: string;
  launchTtlSeconds: number;
  visitorTtlSeconds: number;
  leewaySeconds: number;
}

export const MAX_LAUNCH_TTL_SECONDS = 900;
export const DEFAULT_LAUNCH_TTL_SECONDS = 300;
export const DEFAULT_VISITOR_TTL_SECONDS = 180 * 24 * 3600;
export const LEEWAY_SECONDS = 30;
export const MAX_TOKEN_BYTES = 4096;

function intVar(value: string | undefined, fallback: number, max: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? Math.min(n, max) : fallback;
}

export function tokenPolicy(env: Env): TokenPolicy {
  return {
    issuer: "agent-threads",
    audience: `agent-threads:${env.ENVIRONMENT}`,
    launchTtlSeconds: intVar(
      env.LAUNCH_TOKEN_TTL_SECONDS,
      DEFAULT_LAUNCH_TTL_SECONDS,
      MAX_LAUNCH_TTL_SECONDS,
    ),
    visitorTtlSeconds: intVar(env.VISITOR_TOKEN_TTL_SECONDS, DEFAULT_VISITOR_TTL_SECONDS, 400 * 24 * 3600),
    leewaySeconds: LEEWAY_SECONDS,
  };
}
