// The Worker build that binds artifacts: the artifact schema versions it understands and what it can run (docs/api.md#runtime-revisions).
import type { RuntimeRevision } from "./deployment-store";

/**
 * This build's revision. A new capability (or a dropped one) is a new id: a registered revision keeps meaning what it
 * meant, and releases naming an older one are checked against what that one could run.
 */
export const CURRENT_RUNTIME: RuntimeRevision = {
  id: "runtime-2026-12",
  supportedSchemaVersions: [1],
  capabilities: [
    "tools.server",
    "tools.client",
    "approvals",
    "attachments",
    "handoff",
    "upgrades",
    "context",
  ],
};
