// Converts stored entries to wire entries, and the small peer interface every frame is sent through.
import { z } from "zod";
import {
  approvalActionSchema,
  approvalDecisionSchema,
  ENTRY_EVENTS,
  type ServerFrame,
  toolRequestSchema,
  type WireEntry,
} from "../../shared/protocol";
import type { Entry } from "../../storage/thread/entry-store";

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
  /** `human_agent` messages. */
  authorName: z.string().optional(),
  /** Zero retention blanked the text (src/storage/thread/zero-retention.ts). */
  purged: z.literal(true).optional(),
});

/** What the thread stores in an `event` entry's body. */
export const eventBodySchema = z.object({ event: z.enum(ENTRY_EVENTS), agentName: z.string().optional() });

export type MessageBody = z.infer<typeof messageBodySchema>;

export function messageBody(entry: Entry): MessageBody {
  const parsed = messageBodySchema.safeParse(entry.body);
  return parsed.success ? parsed.data : { text: "" };
}

/** Non-message entries zero retention blanked keep only `{purged: true}`. */
function isPurged(entry: Entry): boolean {
  const body = entry.body;
  return typeof body === "object" && body !== null && "purged" in body && body.purged === true;
}

function wireEvent(entry: Entry): WireEntry["event"] {
  if (entry.kind !== "event") return undefined;
  const parsed = eventBodySchema.safeParse(entry.body);
  if (!parsed.success) return undefined;
  return {
    type: parsed.data.event,
    ...(parsed.data.agentName !== undefined ? { agentName: parsed.data.agentName } : {}),
  };
}

export function toWireEntry(entry: Entry): WireEntry {
  const body = messageBody(entry);
  const event = wireEvent(entry);
  const change = versionChangeOf(entry);
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
    ...(entry.attachments !== undefined ? { attachments: entry.attachments } : {}),
    ...(entry.role === "human_agent" && body.authorName !== undefined ? { authorName: body.authorName } : {}),
    ...(body.purged === true || isPurged(entry) ? { purged: true as const } : {}),
    ...(event !== undefined ? { event } : {}),
    ...actionFields(entry),
    ...(change !== null
      ? { versionChange: { fromVersion: change.fromVersion, toVersion: change.toVersion } }
      : {}),
    createdAt: new Date(entry.createdAt).toISOString(),
  };
}

/** What an approval or client tool entry carries on the wire (docs/tools.md#approvals). */
function actionFields(entry: Entry): Pick<WireEntry, "approval" | "decision" | "toolRequest"> {
  const body = entry.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return {};
  if (entry.kind === "approval_request") {
    const parsed = approvalActionSchema.safeParse(body.approval);
    return parsed.success ? { approval: parsed.data } : {};
  }
  if (entry.kind === "approval_decision") {
    const parsed = approvalDecisionSchema.safeParse(body.decision);
    return parsed.success ? { decision: parsed.data } : {};
  }
  if (entry.kind === "tool_request") {
    const parsed = toolRequestSchema.safeParse(body.toolRequest);
    return parsed.success ? { toolRequest: parsed.data } : {};
  }
  return {};
}

/** The frame last encoded and its text: a broadcast hands every socket the same object, so it is encoded once. */
let lastFrame: ServerFrame | null = null;
let lastText = "";

export function encodeFrame(frame: ServerFrame): string {
  if (frame !== lastFrame) {
    lastText = JSON.stringify(frame);
    lastFrame = frame;
  }
  return lastText;
}

/** Who moved the thread: the tenant (`POST …/upgrade`) or its visitor (accepting `ready.upgrade`). */
export type UpgradeBy = "tenant" | "visitor";

/** What a `version_change` entry stores (and the wire shows as `versionChange`). */
export interface VersionChangeBody {
  fromVersion: number;
  toVersion: number;
  by: UpgradeBy;
}

export function versionChangeOf(entry: Entry): VersionChangeBody | null {
  if (entry.kind !== "version_change") return null;
  const body = entry.body;
  if (body === null || typeof body !== "object" || Array.isArray(body)) return null;
  const { fromVersion, toVersion, by } = body;
  if (typeof fromVersion !== "number" || typeof toVersion !== "number") return null;
  return { fromVersion, toVersion, by: by === "visitor" ? "visitor" : "tenant" };
}
