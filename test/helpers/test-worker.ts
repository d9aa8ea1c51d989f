// The Worker as tests run it: the production entry, with the thread, quota and events objects' test-only subclasses.
export { default } from "../../src/index";
export { TenantEvals } from "../../src/objects/tenant-evals";
export { TestTenantEvents as TenantEvents } from "./test-tenant-events";
export { TestTenantQuota as TenantQuota } from "./test-tenant-quota";
export { TestThreadAgent as ThreadAgent } from "./test-thread-agent";
