// The Worker build that binds artifacts, and the artifact schema versions it understands.
import type { RuntimeRevision } from "./deployment-store";

export const CURRENT_RUNTIME: RuntimeRevision = { id: "runtime-2026-11", supportedSchemaVersions: [1] };
