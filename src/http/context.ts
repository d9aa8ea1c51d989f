// The Hono environment shared by every route: bindings plus what middleware verified.
import type { Context } from "hono";
import type { ApiKeyScope } from "../shared/api";

export interface TenantPrincipal {
  kind: "tenant";
  tenantId: string;
  apiKeyId: string;
  scope: ApiKeyScope;
}

export interface AppVariables {
  requestId: string;
  tenant: TenantPrincipal;
  /** Set by the launch route once the Origin is verified for the selected agent. */
  launchOrigin: string | undefined;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
export type AppContext = Context<AppEnv>;
