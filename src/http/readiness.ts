// Whether this deployment can serve: its secrets parse, its configuration names the platform's hosts, D1 answers
// and has every migration this build expects. Names what is missing; never a value.
import { unusableSecrets } from "../auth/secret-config";
import { localHttpAllowed, publicHosts } from "../control/url-policy";
import { MIGRATIONS } from "../storage/d1/migration-names";
import { appliedMigrations } from "../storage/d1/migration-status";

export type Readiness = { ready: true } | { ready: false; missing: string[] };

export async function readiness(env: Env, expected: readonly string[] = MIGRATIONS): Promise<Readiness> {
  const missing: string[] = [...unusableSecrets(env)];
  // Outside development the platform's own hosts must be configured, so tools and models are refused every one of
  // them, not only the host a given request happened to come in on.
  if (!localHttpAllowed(env.ENVIRONMENT) && publicHosts(env).length === 0) missing.push("PUBLIC_HOSTS");
  let applied: Set<string> | null = null;
  try {
    applied = await appliedMigrations(env.DB);
  } catch {
    missing.push("D1");
  }
  if (applied !== null) {
    for (const name of expected) if (!applied.has(name)) missing.push(`migration:${name}`);
  }
  return missing.length === 0 ? { ready: true } : { ready: false, missing };
}
