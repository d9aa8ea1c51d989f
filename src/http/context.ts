// The Hono environment shared by every route: bindings plus what middleware verified.
import type { Context } from "hono";

export interface TenantPrincipal {
  kind: "tenant";
  tenantId: string;
  apiKeyId: string;
  scope: "admin" | "read";
}

export interface AppVariables {
  requestId: string;
  tenant: TenantPrincipal;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
export type AppContext = Context<AppEnv>;
