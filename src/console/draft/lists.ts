// What the agent's screens read: every version and release (the API pages them oldest first), the draft, which may
// not exist yet, and the artifact's JSON Schema.
import type { Schema } from "@cfworker/json-schema";
import type { DraftResponse, ReleaseResponse, VersionSummaryResponse } from "../../client/admin";
import { AgentThreadsError, eachItem } from "../../client/http";
import { api, call } from "../api";
import { type ArtifactCheck, artifactCheck } from "./schema";

async function collect<T>(items: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Newest first. */
export async function allVersions(agentId: string): Promise<VersionSummaryResponse[]> {
  const items = await collect(
    eachItem((cursor) => api().versions.list(agentId, { limit: 200, ...(cursor ? { cursor } : {}) })),
  );
  return items.sort((a, b) => b.version - a.version);
}

/** Newest first, every environment. */
export async function allReleases(agentId: string): Promise<ReleaseResponse[]> {
  const items = await collect(
    eachItem((cursor) => api().releases.list(agentId, { limit: 200, ...(cursor ? { cursor } : {}) })),
  );
  return items.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** The stored draft, or null when none was ever saved. */
export async function draftOrNull(agentId: string): Promise<DraftResponse | null> {
  try {
    return await api().drafts.get(agentId);
  } catch (error) {
    if (error instanceof AgentThreadsError && error.code === "not_found") return null;
    throw error;
  }
}

let loading: Promise<ArtifactCheck> | undefined;

/** The check against the server's schema, fetched once per page; a failed fetch is tried again on the next call. */
export function loadArtifactCheck(): Promise<ArtifactCheck> {
  loading ??= call<Schema>("GET", "/v1/schemas/artifact.json").then(artifactCheck, (error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
