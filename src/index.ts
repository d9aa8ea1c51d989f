// Worker entry: the Hono app for HTTP, the scheduled job, and the Durable Object classes (thread, quota, events, evals).
import { app } from "./app";
import { pruneConsoleSessions } from "./jobs/console-sessions";
import { expirePreviews } from "./jobs/previews";
import { runRetentionJob } from "./jobs/retention";
import { registerThisRuntime } from "./jobs/runtime-registration";
import { runShardMoves } from "./jobs/shard-moves";

export { TenantEvals } from "./objects/tenant-evals";
export { TenantEvents } from "./objects/tenant-events";
export { TenantQuota } from "./objects/tenant-quota";
export { ThreadAgent } from "./objects/thread-agent";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runRetentionJob(env, controller.scheduledTime));
    ctx.waitUntil(pruneConsoleSessions(env, controller.scheduledTime));
    ctx.waitUntil(expirePreviews(env, controller.scheduledTime));
    ctx.waitUntil(runShardMoves(env));
    ctx.waitUntil(registerThisRuntime(env));
  },
} satisfies ExportedHandler<Env>;
