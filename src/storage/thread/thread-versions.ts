// The agent versions a thread was upgraded to (docs/api.md), in its own SQLite: written once each, re-verified on load.
import { z } from "zod";
import { type Artifact, artifactSchema } from "../../control/artifact";
import { digestOf } from "../../control/canonical-json";
import { parseJsonColumn } from "../json-column";

export interface ThreadVersion {
  versionId: string;
  version: number;
  digest: string;
  artifact: Artifact;
}

const versionRowSchema = z.object({
  version: z.number().int(),
  version_id: z.string(),
  digest: z.string(),
  artifact_json: z.string(),
});

export type ThreadVersionRead =
  | { ok: true; version: ThreadVersion | null }
  | { ok: false; reason: "digest_mismatch" };

/** A stored upgrade target by number, its artifact re-verified against its digest (as the pin is). */
export async function readThreadVersion(
  storage: DurableObjectStorage,
  version: number,
): Promise<ThreadVersionRead> {
  const raw = storage.sql.exec("SELECT * FROM thread_versions WHERE version = ?", version).toArray()[0];
  if (raw === undefined) return { ok: true, version: null };
  const row = versionRowSchema.parse(raw);
  const artifact = artifactSchema.parse(parseJsonColumn(row.artifact_json));
  if ((await digestOf(artifact)) !== row.digest) return { ok: false, reason: "digest_mismatch" };
  return {
    ok: true,
    version: { versionId: row.version_id, version: row.version, digest: row.digest, artifact },
  };
}

/** Keeps a verified version's artifact; a version already kept stays as it is (versions are immutable). */
export function writeThreadVersion(storage: DurableObjectStorage, version: ThreadVersion, now: number): void {
  storage.sql.exec(
    `INSERT INTO thread_versions (version, version_id, digest, artifact_json, added_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (version) DO NOTHING`,
    version.version,
    version.versionId,
    version.digest,
    JSON.stringify(version.artifact),
    now,
  );
}

/** Every stored upgrade target's number and digest, oldest first: what a thread checks before trusting them. */
export function storedThreadVersions(storage: DurableObjectStorage): { version: number; digest: string }[] {
  return storage.sql
    .exec("SELECT version, digest FROM thread_versions ORDER BY version")
    .toArray()
    .map((row) => ({ version: Number(row.version), digest: String(row.digest) }));
}
