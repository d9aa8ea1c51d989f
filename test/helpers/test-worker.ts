// The Worker as tests run it: the production entry, with the thread object's test-only subclass bound as THREAD.
export { default, TenantQuota } from "../../src/index";
export { TestThreadAgent as ThreadAgent } from "./test-thread-agent";
