// What several of the agent's screens read whole: every version and release (the API pages them oldest first), and
// the draft, which may not exist yet.
import type { DraftResponse, ReleaseResponse, VersionSummaryResponse } from "../../client/admin";
import { AgentThreadsError, eachItem } from "../../client/http";
import { api } from "../api";

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
