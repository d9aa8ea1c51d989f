// Worker entry: the Hono app for HTTP, the scheduled job, and the thread Durable Object class.
import { app } from "./app";

export { TenantQuota } from "./auth/tenant-quota";
export { ThreadAgent } from "./thread/thread-agent";

export default {
  fetch: app.fetch,
  async scheduled(_controller, _env, _ctx) {},
} satisfies ExportedHandler<Env>;
