// The Worker as tests run it: the production entry, with the thread and quota objects' test-only subclasses bound.
export { default } from "../../src/index";
export { TestTenantQuota as TenantQuota } from "./test-tenant-quota";
export { TestThreadAgent as ThreadAgent } from "./test-thread-agent";
