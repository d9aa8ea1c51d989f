// Validates server frames without shipping zod to browsers; a unit test keeps it in step with `serverFrameSchema`.
import { ERROR_CODES } from "../shared/errors";
import type { ServerFrame, WireEntry } from "../shared/protocol";
import { isInt, isList, isObj, isStr, type Obj, oneOf, optional } from "./checks";
import { isPresentation } from "./presentation-rules";

const KINDS = [
  "message",
  "event",
  "model_change",
  "label",
  "summary",
  "custom",
  "version_change",
  "approval_request",
  "approval_decision",
  "tool_request",
];
const ROLES = ["user", "assistant", "tool", "system", "human_agent"];
const MODES = ["agent", "handoff"];
const RATINGS = ["up", "down"];
const EVENTS = ["handoff_started", "handoff_ended"];
const ENTRY_STATUSES = ["complete", "interrupted", "failed"];
const RUN_STATUSES = ["queued", "running", "requires_action", "succeeded", "failed", "aborted"];
const APPROVERS = ["user", "tenant", "any"];
const DECIDERS = [...APPROVERS.slice(0, 2), "timeout", "system"];
const DECISIONS = ["approve", "deny"];

const isId = (v: unknown): boolean => isStr(v) && v.length >= 1 && v.length <= 128;

const isFeedback = (v: unknown): boolean =>
  isObj(v) && oneOf(v.rating, RATINGS) && optional(v.comment, isStr) && isStr(v.at);
const isEvent = (v: unknown): boolean => isObj(v) && oneOf(v.type, EVENTS) && optional(v.agentName, isStr);
/** A client tool call (`tool_request` frame and entry); an approval action has the same fields and more. */
const isCall = (v: unknown): v is Obj =>
  isObj(v) && isId(v.toolCallId) && isStr(v.name) && isObj(v.input) && isStr(v.expiresAt);
const isAction = (v: unknown): boolean =>
  isCall(v) &&
  isId(v.approvalId) &&
  oneOf(v.by, APPROVERS) &&
  optional(v.title, isStr) &&
  optional(v.description, isStr);
const isDecision = (v: unknown): boolean =>
  isObj(v) &&
  isId(v.approvalId) &&
  oneOf(v.decision, DECISIONS) &&
  oneOf(v.by, DECIDERS) &&
  (v.reason === null || isStr(v.reason));

function isEntry(v: unknown): v is WireEntry {
  return (
    isObj(v) &&
    isId(v.id) &&
    (v.parentId === null || isId(v.parentId)) &&
    oneOf(v.kind, KINDS) &&
    (v.role === null || oneOf(v.role, ROLES)) &&
    (v.runId === null || isId(v.runId)) &&
    isStr(v.text) &&
    optional(v.status, (s) => oneOf(s, ENTRY_STATUSES)) &&
    optional(v.clientMessageId, isStr) &&
    optional(v.authorName, isStr) &&
    optional(v.event, isEvent) &&
    optional(v.feedback, isFeedback) &&
    optional(v.approval, isAction) &&
    optional(v.decision, isDecision) &&
    optional(v.toolRequest, isCall) &&
    isStr(v.createdAt)
  );
}

const isErrorBody = (v: Obj): boolean => oneOf(v.code, ERROR_CODES) && isStr(v.message);

/** True when `v` is a frame `serverFrameSchema` accepts. */
export function isServerFrame(v: unknown): v is ServerFrame {
  if (!isObj(v)) return false;
  switch (v.type) {
    case "ready": {
      const agent = v.agent;
      return (
        v.protocol === 1 &&
        isId(v.threadId) &&
        (v.leafId === null || isId(v.leafId)) &&
        isObj(agent) &&
        isStr(agent.name) &&
        isInt(agent.version) &&
        optional(v.presentation, isPresentation) &&
        oneOf(v.mode, MODES) &&
        optional(v.agentName, isStr)
      );
    }
    case "mode":
      return oneOf(v.mode, MODES) && optional(v.agentName, isStr);
    case "feedback":
      return isId(v.entryId) && (v.feedback === null || isFeedback(v.feedback));
    case "entry":
      return isEntry(v.entry);
    case "run":
      return (
        isId(v.runId) &&
        oneOf(v.status, RUN_STATUSES) &&
        optional(v.error, (e) => isObj(e) && isErrorBody(e)) &&
        optional(v.actions, (a) => isList(a, isAction))
      );
    case "tool_request":
      return isId(v.runId) && isCall(v);
    case "delta":
      return isId(v.runId) && isInt(v.seq) && v.seq >= 1 && isStr(v.text);
    case "history":
      return isList(v.items, isEntry) && optional(v.nextCursor, isStr);
    case "error":
      return isErrorBody(v);
    case "pong":
      return true;
    case "token":
      return isStr(v.token) && isStr(v.expiresAt);
    default:
      return false;
  }
}

/** The frame in a WebSocket message, or null for anything that is not a valid server frame. */
export function parseServerFrame(data: unknown): ServerFrame | null {
  if (!isStr(data)) return null;
  try {
    const value: unknown = JSON.parse(data);
    return isServerFrame(value) ? value : null;
  } catch {
    return null;
  }
}
