// The checks of an artifact that only the request can make: its models and tools may never call the platform itself
// (only the request knows the host it was reached on), may call local plain http only in development, and only
// development may use the `local` model.
import { environmentModelIssues } from "../control/artifact";
import type { FieldIssue } from "../control/field-issues";
import {
  localHttpAllowed,
  modelUrlIssues,
  platformHostsOf,
  platformToolUrlIssues,
  publicHosts,
} from "../control/url-policy";

export function requestUrlIssues(env: Env, requestUrl: string, definition: unknown): FieldIssue[] {
  const hosts = platformHostsOf(requestUrl, publicHosts(env));
  const allowLocalHttp = localHttpAllowed(env.ENVIRONMENT);
  return [
    ...modelUrlIssues(definition, { platformHosts: hosts, allowLocalHttp }),
    ...platformToolUrlIssues(definition, hosts, allowLocalHttp),
  ];
}

/** Everything publishing (and a draft preview) checks beyond the artifact schema, for this request's deployment. */
export function requestArtifactIssues(env: Env, requestUrl: string, definition: unknown): FieldIssue[] {
  return [
    ...environmentModelIssues(definition, env.ENVIRONMENT),
    ...requestUrlIssues(env, requestUrl, definition),
  ];
}
