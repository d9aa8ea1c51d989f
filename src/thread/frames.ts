// Converts stored entries to wire entries, and the small peer interface every frame is sent through.
import { z } from "zod";
import type { ServerFrame, WireEntry } from "../shared/protocol";
import type { Entry } from "../storage/entry-store";

/** A receiver of server frames: a WebSocket connection or an SSE stream. */
export interface Peer {
  readonly id: string;
  send(frame: ServerFrame): void;
}

/** What the thread stores in a message entry's body. */
export const messageBodySchema = z.object({
  text: z.string(),
  status: z.enum(["complete", "interrupted", "failed"]).optional(),
  clientMessageId: z.string().optional(),
});

export type MessageBody = z.infer<typeof messageBodySchema>;

export function messageBody(entry: Entry): MessageBody {
  const parsed = messageBodySchema.safeParse(entry.body);
  return parsed.success ? parsed.data : { text: "" };
}

export function toWireEntry(entry: Entry): WireEntry {
  const body = messageBody(entry);
  const role = entry.role === null ? null : entry.role;
  return {
    id: entry.id,
    parentId: entry.parentId,
    kind: entry.kind,
    role,
    runId: entry.runId,
    text: body.text,
    ...(body.status !== undefined ? { status: body.status } : {}),
    ...(body.clientMessageId !== undefined ? { clientMessageId: body.clientMessageId } : {}),
    createdAt: new Date(entry.createdAt).toISOString(),
  };
}

export function encodeFrame(frame: ServerFrame): string {
  return JSON.stringify(frame);
}
