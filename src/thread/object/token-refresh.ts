// Refresh without relaunch: a connected socket's thread signs a new launch token for the same claims, once its own
// binding and owner admitted them, so a widget renews access with no D1 write and no launch quota.
import { signLaunchToken } from "../../auth/launch-token";
import type { ServerFrame } from "../../shared/protocol";
import type { ThreadClaims } from "../contract";

/**
 * The `token` frame for `claims` (the socket's, verified at its upgrade and just admitted again): same tenant, agent,
 * thread, subject, origin and preview mark (the thread's own), and the newer of the claimed and the held context version.
 */
export async function refreshedToken(
  env: Env,
  claims: ThreadClaims,
  heldContextVersion: number,
  preview: boolean,
): Promise<ServerFrame> {
  const contextVersion = Math.max(claims.contextVersion ?? 0, heldContextVersion);
  const signed = await signLaunchToken(env, {
    tenantId: claims.tenantId,
    agentId: claims.agentId,
    threadId: claims.threadId,
    sub: claims.sub,
    subjectKind: claims.subjectKind,
    ...(claims.origin !== undefined ? { origin: claims.origin } : {}),
    ...(claims.apiKeyId !== undefined ? { apiKeyId: claims.apiKeyId } : {}),
    ...(contextVersion > 0 ? { contextVersion } : {}),
    ...(preview ? { preview: true as const } : {}),
  });
  return { type: "token", token: signed.token, expiresAt: signed.expiresAt.toISOString() };
}
