// The D1 migrations this build expects applied, oldest first; GET /v1/ready compares them with d1_migrations.
// Generated from migrations/ by `node scripts/migration-names.mjs`; `npm test` fails when it is stale.
export const MIGRATIONS: readonly string[] = [
  "0001_control_plane.sql",
  "0002_thread_registry.sql",
  "0003_sessions_projection.sql",
  "0004_drop_unused_thread_index.sql",
  "0005_tenant_operations.sql",
  "0006_agent_origins.sql",
  "0007_thread_context.sql",
  "0008_handoff_feedback.sql",
  "0009_webhook_endpoints.sql",
  "0010_analytics_search.sql",
  "0011_thread_upgrades.sql",
  "0012_legal_holds_agent_retention.sql",
  "0013_subject_erasure.sql",
  "0014_run_input_digest.sql",
  "0015_console_sessions_previews.sql",
  "0016_projection_shards.sql",
  "0017_launch_shares.sql",
  "0018_thread_tool_policy.sql",
  "0019_agent_approvals.sql",
  "0021_erasure_attachments.sql",
];
