// Brings the object's copy of its context variables and tool policy up to the registry's when a caller's claims show a
// newer launch.
import { parseContextText } from "../../control/context-variables";
import { parseToolPolicyText } from "../../control/tool-policy";
import { fail, ok, type Result } from "../../errors";
import { findThreadContext } from "../../storage/d1/thread-registry";
import { adoptThreadContext, readThreadContext } from "../../storage/thread/context-store";
import type { ThreadClaims } from "../contract";

/**
 * Reads D1 only when the claims name a context version newer than the copy held: a thread without context, and
 * every request after the first one at a version, costs one `meta` read. A D1 failure keeps a copy held (the next such
 * request tries again) rather than holding up the conversation; a thread that holds none yet — a new thread's first
 * request, its launch's context and tool policy only in the registry — is refused until it can read them, so its
 * first turn never runs without them.
 */
export async function catchUpContext(
  storage: DurableObjectStorage,
  db: D1Database,
  claims: ThreadClaims,
): Promise<Result<null>> {
  const claimed = claims.contextVersion;
  const held = readThreadContext(storage).version;
  if (claimed === undefined || claimed <= held) return ok(null);
  let row: Awaited<ReturnType<typeof findThreadContext>>;
  try {
    row = await findThreadContext(db, claims.tenantId, claims.threadId);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", message: "context read failed", error: String(error) }));
    return held === 0
      ? fail("upstream_unavailable", "The thread is briefly unavailable; try again.")
      : ok(null);
  }
  // No live registry row: the thread was deleted there. One holding no copy has nothing it may run with.
  if (row === null) return held === 0 ? fail("unauthenticated", "Authentication required.") : ok(null);
  const toolPolicy = parseToolPolicyText(row.toolPolicy);
  adoptThreadContext(storage, {
    version: row.contextVersion,
    variables: parseContextText(row.context),
    ...(toolPolicy !== null ? { toolPolicy } : {}),
  });
  return ok(null);
}
