// The object's fetch after its gate: only the streaming paths, the WebSocket upgrade and a message answered as SSE.
import { fail } from "../../errors";
import { postMessageSchema, type RequestMeta, refusalResponse, type ThreadClaims } from "../contract";
import type { ThreadRuntime } from "../conversation";
import { sendRequest } from "../conversation";
import { heldStream, lastEventId, sseStream } from "./sse-stream";

export interface StreamingFetch {
  runtime: ThreadRuntime;
  claims: ThreadClaims;
  /** The Worker request this fetch serves. */
  meta: RequestMeta | undefined;
  openSockets: number;
  /** Hands the upgrade to the SDK, which accepts the socket and calls `onConnect`. */
  upgrade: () => Promise<Response>;
}

export async function streamingFetch(request: Request, target: StreamingFetch): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path === "/ws") {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return refusalResponse(fail("bad_request", "WebSocket upgrade required."));
    }
    if (target.openSockets >= target.runtime.limits.socketsPerThread) {
      return refusalResponse({
        ...fail("rate_limited", "Too many open connections to this thread."),
        retryAfter: 10,
      });
    }
    return target.upgrade();
  }
  if (path === "/messages" && request.method === "POST") {
    // Already parsed by the Worker; parsed again here because this is the object's own boundary.
    const message = postMessageSchema.safeParse(await request.json().catch(() => null));
    if (!message.success) return refusalResponse(fail("bad_request", "Request body is invalid."));
    const accepted = await target.runtime.submit(sendRequest(target.claims.sub, message.data, target.meta));
    if (!accepted.ok) return refusalResponse(accepted);
    if ("held" in accepted.value) return heldStream(target.runtime, accepted.value);
    return sseStream(target.runtime, accepted.value.run.id, lastEventId(request));
  }
  return refusalResponse(fail("not_found", "Not found."));
}
