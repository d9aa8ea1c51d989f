// Shapes projected rows into API JSON and keeps list cursors bound to one query, for the sessions and "me" routes.
import { z } from "zod";
import { AppError } from "../errors";
import type {
  HoldResponse,
  MessageResponse,
  MyThreadResponse,
  SessionResponse,
} from "../shared/sessions-api";
import type { LegalHold } from "../storage/d1/legal-holds";
import type { MessageRecord } from "../storage/d1/message-row";
import type { SearchPosition } from "../storage/d1/session-search";
import type { MessagePosition, SessionPosition, SessionRecord } from "../storage/d1/sessions-repository";

/** A hold as the tenant sees it. */
export function holdView(h: LegalHold): HoldResponse {
  return { scope: h.scope, target: h.target, reason: h.reason, since: h.createdAt };
}

/** `hold` is the legal hold covering the session (its own, else its subject's), or null. */
export function sessionView(s: SessionRecord, hold: LegalHold | null): SessionResponse {
  return {
    threadId: s.threadId,
    agentId: s.agentId,
    agentName: s.agentName,
    environment: s.environment,
    agentVersion: s.agentVersion,
    artifactDigest: s.artifactDigest,
    version: s.leafVersion,
    subject: s.subject,
    title: s.title,
    messageCount: s.messageCount,
    lastMessageAt: s.lastMessageAt,
    leafId: s.state.leafId,
    lastRun: s.state.lastRun,
    mode: s.mode,
    hold: hold === null ? null : { reason: hold.reason, since: hold.createdAt, scope: hold.scope },
    ...(s.preview ? { preview: true as const } : {}),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

export function myThreadView(s: SessionRecord): MyThreadResponse {
  return {
    threadId: s.threadId,
    agentVersion: s.agentVersion,
    version: s.leafVersion,
    title: s.title,
    messageCount: s.messageCount,
    lastMessageAt: s.lastMessageAt,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** A message as the sessions API answers it: `attachments` only on a message sent with files. */
export function messageView(m: MessageRecord): MessageResponse {
  const { attachments, ...rest } = m;
  return { ...rest, ...(attachments !== null ? { attachments } : {}) };
}

/** A list's cursor name: the query's own parameters, so a cursor only continues the list it came from. */
export function listName(kind: string, parameters: readonly (string | null)[]): string {
  return `${kind}:${JSON.stringify(parameters)}`;
}

const sessionPosition = z.tuple([z.string(), z.string()]);
const messagePosition = z.tuple([z.number().int(), z.string()]);
const searchPosition = z.tuple([z.literal("q"), z.number().int()]);

function decodePosition<T>(schema: z.ZodType<T>, text: string): T {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // Falls through to the same answer as any other unreadable cursor.
  }
  throw new AppError("bad_request", "Invalid cursor.");
}

export const positions = {
  session: {
    encode: (p: SessionPosition): string => JSON.stringify([p.updatedAt, p.id]),
    decode: (text: string): SessionPosition => {
      const [updatedAt, id] = decodePosition(sessionPosition, text);
      return { updatedAt, id };
    },
  },
  search: {
    encode: (p: SearchPosition): string => JSON.stringify(["q", p.hit]),
    decode: (text: string): SearchPosition => {
      const [, hit] = decodePosition(searchPosition, text);
      return { hit };
    },
  },
  message: {
    encode: (p: MessagePosition): string => JSON.stringify([p.seq, p.id]),
    decode: (text: string): MessagePosition => {
      const [seq, id] = decodePosition(messagePosition, text);
      return { seq, id };
    },
  },
};
