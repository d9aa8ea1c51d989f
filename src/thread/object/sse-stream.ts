// A run as Server-Sent Events for `POST …/messages` with `Accept: text/event-stream`; `Last-Event-ID` resumes it.
import type { ServerFrame } from "../../shared/protocol";
import type { HeldTurn, ThreadRuntime } from "../conversation";
import { toWireEntry } from "../run";

const SSE_HEADERS = { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store" };
const event = (frame: ServerFrame): string => `event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`;

/** A send held in handoff: the stored entry and the thread's mode, then the stream ends (no run follows). */
export function heldStream(runtime: ThreadRuntime, held: HeldTurn): Response {
  const frames: ServerFrame[] = [
    { type: "entry", entry: toWireEntry(held.userEntry) },
    { type: "mode", ...runtime.handoff.readyFields() },
  ];
  return new Response(frames.map(event).join(""), { status: 200, headers: SSE_HEADERS });
}

/** The resume point a client sent: the seq of the last delta it saw, or 0. */
export function lastEventId(request: Request): number {
  const id = Number(request.headers.get("Last-Event-ID") ?? "0");
  return Number.isInteger(id) && id > 0 ? id : 0;
}

/** `id` is the delta seq, so `Last-Event-ID` resumes exactly; the stream ends with the run. */
export function sseStream(runtime: ThreadRuntime, runId: string, afterSeq: number): Response {
  const encoder = new TextEncoder();
  // A runtime byte stream, not a JS TransformStream: each write to it waits for the output gate, so an event leaves
  // only after the storage writes before it are confirmed — the delta it carries is durable (live-run.ts).
  const { readable, writable } = new IdentityTransformStream();
  const writer = writable.getWriter();
  let closed = false;
  let unsubscribe = () => {};
  const write = (frame: ServerFrame) => {
    if (closed) return;
    // Only the run's own frames: no mode or feedback announcement reaches a run's stream.
    if (
      frame.type !== "delta" &&
      frame.type !== "run" &&
      frame.type !== "entry" &&
      frame.type !== "tool_request"
    )
      return;
    if ("runId" in frame && frame.runId !== runId) return;
    if (frame.type === "entry" && frame.entry.runId !== runId) return;
    const id = frame.type === "delta" ? `id: ${frame.seq}\n` : "";
    void writer.write(encoder.encode(`${id}${event(frame)}`)).catch(() => {
      closed = true;
      unsubscribe();
    });
    if (
      frame.type === "run" &&
      // A run waiting for a person ends the stream too: it may wait for days. After the decision, the run's
      // stream is read again from where it stopped (docs/protocol.md#waiting-for-a-person).
      (frame.status === "succeeded" ||
        frame.status === "failed" ||
        frame.status === "aborted" ||
        frame.status === "requires_action")
    ) {
      closed = true;
      unsubscribe();
      void writer.close().catch(() => {});
    }
  };
  // Catch-up and subscription happen in one synchronous step, so no delta falls between them.
  for (const frame of runtime.catchUp(runId, afterSeq)) write(frame);
  if (!closed) unsubscribe = runtime.subscribe({ id: `sse:${runId}`, send: write });
  return new Response(readable, { status: 200, headers: SSE_HEADERS });
}
