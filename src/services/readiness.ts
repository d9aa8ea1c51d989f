// Whether this deployment can serve: its secrets parse, its configuration names the platform's hosts, every D1
// database (the control plane and each projection shard) answers and has every migration this build expects, and the
// attachments bucket is bound and answers. Names what is missing; never a value.
import { unusableSecrets } from "../auth/secret-config";
import { localHttpAllowed, publicHosts } from "../control/url-policy";
import { attachmentsBucketAnswers } from "../storage/attachments";
import { MIGRATIONS } from "../storage/d1/migration-names";
import { appliedMigrations } from "../storage/d1/migration-status";
import { SHARDS, shardDb } from "../storage/d1/shards";

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
  // Every projection shard takes the same migrations as DB (docs/decisions.md); each is named on its own.
  for (const shard of SHARDS) {
    if (shard === "DB") continue;
    let shardApplied: Set<string>;
    try {
      shardApplied = await appliedMigrations(shardDb(env, shard));
    } catch {
      missing.push(`D1:${shard}`);
      continue;
    }
    for (const name of expected) if (!shardApplied.has(name)) missing.push(`migration:${shard}:${name}`);
  }
  // Uploads and downloads need the bucket (docs/api.md, "Attachments"); a HEAD of a key that never exists is the
  // cheapest call that fails when the binding or the bucket is not there.
  if (!(await attachmentsBucketAnswers(env.ATTACHMENTS))) missing.push("ATTACHMENTS");
  return missing.length === 0 ? { ready: true } : { ready: false, missing };
}
