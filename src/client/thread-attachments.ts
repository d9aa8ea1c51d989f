// A thread's attachments over HTTP with its launch token (docs/client.md#attachments): the upload that answers an
// AttachmentRef to send with a message, and the download of an attachment's bytes.
import type { AttachmentRef } from "../shared/protocol";
import { errorFromResponse, type FetchLike } from "./http";
import type { ThreadConnectionOptions, ThreadLaunch } from "./thread-options";

/**
 * `name`: the attachment's name (default: a `File`'s own name, else "file"); the media type is the blob's `type`. A
 * refusal throws `AgentThreadsError`: 413; 415 `type_not_accepted` or `type_mismatch`; 409 `attachment_limit`; 429
 * `storage_quota` (docs/api.md#attachments).
 */
export interface UploadOptions {
  name?: string;
  signal?: AbortSignal;
}

/** What a thread connection lends these calls: a fetch, the thread's attachments URL and a current token. */
export interface ThreadHttp {
  fetch: FetchLike;
  /** `…/v1/threads/:threadId/attachments`. */
  url: string;
  token: string;
}

/** The thread's attachments URL, from its launch's WebSocket URL (`…/v1/threads/:threadId/ws`). */
export function attachmentsUrl(websocketUrl: string): string {
  const url = new URL(websocketUrl);
  url.protocol = url.protocol === "wss:" ? "https:" : "http:";
  url.pathname = url.pathname.replace(/\/ws$/, "/attachments");
  url.search = "";
  return url.href;
}

/** What a connection's current launch and options lend these calls. */
export function lend(launch: ThreadLaunch, options: Pick<ThreadConnectionOptions, "fetch">): ThreadHttp {
  return {
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    url: attachmentsUrl(launch.websocketUrl),
    token: launch.token,
  };
}

async function call(http: ThreadHttp, url: string, init: RequestInit): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${http.token}`);
  const res = await http.fetch(url, { ...init, headers });
  if (!res.ok) throw await errorFromResponse(res);
  return res;
}

export async function uploadAttachment(
  http: ThreadHttp,
  file: Blob,
  options: UploadOptions,
): Promise<AttachmentRef> {
  const own = (file as { name?: unknown }).name;
  const name = options.name ?? (typeof own === "string" && own !== "" ? own : "file");
  const res = await call(http, http.url, {
    method: "POST",
    body: file,
    headers: {
      "Content-Type": file.type || "application/octet-stream",
      // Header values are bytes: the name travels percent-encoded (docs/api.md#attachments).
      "X-Attachment-Name": encodeURIComponent(name),
    },
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  return (await res.json()) as AttachmentRef;
}

export async function downloadAttachment(
  http: ThreadHttp,
  id: string,
  options: { signal?: AbortSignal },
): Promise<Blob> {
  const res = await call(http, `${http.url}/${encodeURIComponent(id)}`, {
    method: "GET",
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  return res.blob();
}

/**
 * A file part's bytes as a blob of `mediaType`: a `data:` URL decoded here (base64 or percent-encoded), anything else
 * (`blob:` in browsers, `https:`) read with `fetch`.
 */
export async function blobOfUrl(url: string, mediaType: string): Promise<Blob> {
  if (url.startsWith("data:")) {
    const comma = url.indexOf(",");
    const head = url.slice(5, comma);
    const data = url.slice(comma + 1);
    const bytes = head.endsWith(";base64")
      ? Uint8Array.from(atob(data), (c) => c.charCodeAt(0))
      : new TextEncoder().encode(decodeURIComponent(data));
    return new Blob([bytes], { type: mediaType });
  }
  const res = await fetch(url);
  return new Blob([await res.arrayBuffer()], { type: mediaType });
}
