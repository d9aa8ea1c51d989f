// Brings the object's copy of its context variables and tool policy up to the registry's when a caller's claims show a
// newer launch.
import { parseContextText } from "../../control/context-variables";
import { parseToolPolicyText } from "../../control/tool-policy";
import { findThreadContext } from "../../storage/d1/thread-registry";
import { adoptThreadContext, readThreadContext } from "../../storage/thread/context-store";
import type { ThreadClaims } from "../contract";

/**
 * Reads D1 only when the claims name a context version newer than the copy held: a thread without context, and
 * every request after the first one at a version, costs one `meta` read. A D1 failure keeps the copy held (the next
 * such request tries again) rather than holding up the conversation.
 */
export async function catchUpContext(
  storage: DurableObjectStorage,
  db: D1Database,
  claims: ThreadClaims,
): Promise<void> {
  const claimed = claims.contextVersion;
  if (claimed === undefined || claimed <= readThreadContext(storage).version) return;
  let row: Awaited<ReturnType<typeof findThreadContext>>;
  try {
    row = await findThreadContext(db, claims.tenantId, claims.threadId);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", message: "context read failed", error: String(error) }));
    return;
  }
  if (row === null) return;
  const toolPolicy = parseToolPolicyText(row.toolPolicy);
  adoptThreadContext(storage, {
    version: row.contextVersion,
    variables: parseContextText(row.context),
    ...(toolPolicy !== null ? { toolPolicy } : {}),
  });
}
