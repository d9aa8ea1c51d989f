// The thread's HTTP API inside the object: info, branch entries, messages (JSON or SSE with resume), cancel.
import { z } from "zod";
import type { ServerFrame } from "../shared/protocol";
import type { ThreadClaims } from "./claims";
import { toWireEntry } from "./frames";
import { objectError } from "./object-error";
import type { ThreadRuntime } from "./thread-runtime";

const MAX_BODY_BYTES = 64 * 1024;

const messageSchema = z.strictObject({
  clientMessageId: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/),
  text: z.string().min(1),
  parentId: z.string().min(1).max(128).optional(),
});

async function readMessage(request: Request): Promise<z.infer<typeof messageSchema> | Response> {
  const type = (request.headers.get("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json")
    return objectError("unsupported_media_type", "Content-Type must be application/json.");
  const body = await request.arrayBuffer();
  if (body.byteLength > MAX_BODY_BYTES) return objectError("payload_too_large", "Request body too large.");
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return objectError("bad_request", "Request body is not valid JSON.");
  }
  const parsed = messageSchema.safeParse(value);
  if (!parsed.success) {
    return objectError("bad_request", "Request body is invalid.", {
      details: parsed.error.issues.map((i) => ({ path: i.path.join(".") || "(root)", message: i.message })),
    });
  }
  return parsed.data;
}

/** Streams a run as Server-Sent Events: `id` is the delta seq, so `Last-Event-ID` resumes exactly. */
function sseStream(runtime: ThreadRuntime, runId: string, afterSeq: number): Response {
  const encoder = new TextEncoder();
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  let closed = false;
  let unsubscribe = () => {};
  const write = (frame: ServerFrame) => {
    if (closed) return;
    if ("runId" in frame && frame.runId !== runId) return;
    if (frame.type === "entry" && frame.entry.runId !== runId) return;
    const id = frame.type === "delta" ? `id: ${frame.seq}\n` : "";
    void writer
      .write(encoder.encode(`${id}event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`))
      .catch(() => {
        closed = true;
        unsubscribe();
      });
    if (
      frame.type === "run" &&
      (frame.status === "succeeded" || frame.status === "failed" || frame.status === "aborted")
    ) {
      closed = true;
      unsubscribe();
      void writer.close().catch(() => {});
    }
  };
  // Catch-up and subscription happen in one synchronous step, so no delta falls between them.
  for (const frame of runtime.catchUp(runId, afterSeq)) write(frame);
  if (!closed) unsubscribe = runtime.subscribe({ id: `sse:${runId}`, send: write });
  return new Response(readable, {
    status: 200,
    headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store" },
  });
}

export async function handleThreadHttp(
  runtime: ThreadRuntime,
  request: Request,
  path: string,
  claims: ThreadClaims,
): Promise<Response> {
  const url = new URL(request.url);
  const binding = runtime.binding;

  if (request.method === "GET" && path === "/") {
    const first = runtime.entries.all({ limit: 1 })[0];
    const leaf = runtime.entries.latestLeaf();
    return Response.json({
      threadId: binding.threadId,
      agent: {
        id: binding.agentId,
        name: binding.artifact.name,
        version: binding.version,
        versionId: binding.versionId,
        digest: binding.digest,
      },
      createdAt: new Date(first?.createdAt ?? binding.boundAt).toISOString(),
      updatedAt: new Date(leaf?.createdAt ?? binding.boundAt).toISOString(),
      leafId: leaf?.id ?? null,
    });
  }

  if (request.method === "GET" && path === "/entries") {
    const leafId = url.searchParams.get("leafId") ?? runtime.leafId();
    if (leafId === null) return Response.json({ items: [] });
    const limitParam = url.searchParams.get("limit");
    const limit = limitParam === null ? 50 : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
      return objectError("bad_request", "limit must be an integer from 1 to 200.");
    }
    const cursor = url.searchParams.get("cursor");
    const page = runtime.entries.branch(leafId, { limit, ...(cursor !== null ? { cursor } : {}) });
    if (!page.ok) return objectError(page.code, page.message);
    return Response.json({
      items: page.value.items.map(toWireEntry),
      ...(page.value.nextCursor !== undefined ? { nextCursor: page.value.nextCursor } : {}),
    });
  }

  if (request.method === "POST" && path === "/messages") {
    const body = await readMessage(request);
    if (body instanceof Response) return body;
    const accepted = runtime.accept({
      kind: "send",
      subject: claims.sub,
      clientMessageId: body.clientMessageId,
      text: body.text,
      ...(body.parentId !== undefined ? { parentId: body.parentId } : {}),
    });
    if (!accepted.ok) {
      return objectError(accepted.code, accepted.message, {
        ...(accepted.retryAfter !== undefined ? { retryAfter: accepted.retryAfter } : {}),
      });
    }
    const { run, userEntry } = accepted.value;
    if ((request.headers.get("Accept") ?? "").includes("text/event-stream")) {
      const lastEventId = Number(request.headers.get("Last-Event-ID") ?? "0");
      return sseStream(runtime, run.id, Number.isInteger(lastEventId) && lastEventId > 0 ? lastEventId : 0);
    }
    const final = (await runtime.settled(run.id)) ?? run;
    const assistant = final.assistantEntryId === null ? null : runtime.entries.get(final.assistantEntryId);
    return Response.json(
      {
        run: { id: final.id, status: final.status, ...(final.error !== null ? { error: final.error } : {}) },
        entries: [toWireEntry(userEntry), ...(assistant !== null ? [toWireEntry(assistant)] : [])],
      },
      { status: accepted.value.created ? 201 : 200 },
    );
  }

  const cancel = /^\/runs\/([^/]+)\/cancel$/.exec(path);
  if (request.method === "POST" && cancel !== null) {
    const cancelled = runtime.cancel(decodeURIComponent(cancel[1]!));
    if (!cancelled.ok) return objectError(cancelled.code, cancelled.message);
    return Response.json({ runId: cancelled.value.id, status: "cancelling" }, { status: 202 });
  }

  return objectError("not_found", "Not found.");
}
