// The thread's binding to one exact agent version, in its own SQLite: written once, re-verified on every load.
import { z } from "zod";
import { type Artifact, artifactSchema } from "../../control/artifact";
import { digestOf } from "../../control/canonical-json";
import type { Environment } from "../../control/deployment-store";
import { environmentSchema } from "../../shared/api";
import { parseJsonColumn } from "../json-column";
import type { JsonValue } from "../redact";
import { readMeta, writeMeta } from "./thread-meta";

/**
 * What a preview thread (`POST /v1/agents/:id/draft/preview-session`, docs/api.md) is bound to: a draft revision (its
 * pin's `version` is 0) or a published version. Kept in `meta` beside the pin, written with it, never changed.
 */
export type PreviewMark = ({ draftRevision: number } | { version: number }) & {
  /**
   * An eval case's thread (docs/evals.md): every tool call is answered from these outputs by tool name, never by the
   * tool's webhook, the client or a person; a tool without one is refused.
   */
  toolMocks?: Record<string, JsonValue>;
};

const PREVIEW_KEY = "preview";

const toolMocks = { toolMocks: z.record(z.string(), z.json()).optional() };
const previewMarkSchema = z.union([
  z.strictObject({ draftRevision: z.number().int().positive(), ...toolMocks }),
  z.strictObject({ version: z.number().int().positive(), ...toolMocks }),
]);

export interface ThreadBinding {
  tenantId: string;
  environment: Environment;
  agentId: string;
  threadId: string;
  versionId: string;
  version: number;
  digest: string;
  artifact: Artifact;
  boundAt: number;
  /** Set only on a preview thread: never listed, counted or announced as a session, and erased after a day. */
  preview?: PreviewMark;
}

const pinRowSchema = z.object({
  tenant_id: z.string(),
  environment: environmentSchema,
  agent_id: z.string(),
  thread_id: z.string(),
  version_id: z.string(),
  version: z.number().int(),
  digest: z.string(),
  artifact_json: z.string(),
  bound_at: z.number().int(),
});

export type PinRead = { ok: true; binding: ThreadBinding | null } | { ok: false; reason: "digest_mismatch" };

/** Reads the stored binding and re-verifies the artifact against its digest. */
export async function readPin(storage: DurableObjectStorage): Promise<PinRead> {
  const raw = storage.sql.exec("SELECT * FROM pin WHERE id = 1").toArray()[0];
  if (raw === undefined) return { ok: true, binding: null };
  const row = pinRowSchema.parse(raw);
  const artifact = artifactSchema.parse(parseJsonColumn(row.artifact_json));
  if ((await digestOf(artifact)) !== row.digest) return { ok: false, reason: "digest_mismatch" };
  const preview = readMeta(storage, PREVIEW_KEY);
  return {
    ok: true,
    binding: {
      tenantId: row.tenant_id,
      environment: row.environment,
      agentId: row.agent_id,
      threadId: row.thread_id,
      versionId: row.version_id,
      version: row.version,
      digest: row.digest,
      artifact,
      boundAt: row.bound_at,
      ...(preview !== null ? { preview: previewMarkSchema.parse(parseJsonColumn(preview)) } : {}),
    },
  };
}

/** Writes the binding once; a second write is a bug and throws (the row has a single-row constraint). */
export function writePin(storage: DurableObjectStorage, binding: ThreadBinding): void {
  storage.sql.exec(
    `INSERT INTO pin (id, tenant_id, environment, agent_id, thread_id, version_id, version, digest, artifact_json, bound_at)
     VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    binding.tenantId,
    binding.environment,
    binding.agentId,
    binding.threadId,
    binding.versionId,
    binding.version,
    binding.digest,
    JSON.stringify(binding.artifact),
    binding.boundAt,
  );
  if (binding.preview !== undefined) writeMeta(storage, PREVIEW_KEY, JSON.stringify(binding.preview));
}
