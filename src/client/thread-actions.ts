// What a thread waits for from the page or app holding it (docs/tools.md#approvals, docs/tools.md#client-tools):
// pending approvals and client tool calls as the frames announce them, each announced to listeners once per
// connection however often a reconnect replays it, and a client tool handler that answers each call once.
import type { ApprovalAction, ClientFrame, ServerFrame } from "../shared/protocol";

/** The longest `error` a `tool_result` may carry (the protocol's MAX_DECISION_REASON_CHARS; the bundle imports no zod). */
const MAX_ERROR_CHARS = 1000;

/** An approval a run waits for, with the run it belongs to. */
export interface ApprovalRequest extends ApprovalAction {
  runId: string;
}

/** A client tool call a run waits for: the page or app runs it and answers with its output (or an error). */
export interface ToolCallRequest {
  runId: string;
  toolCallId: string;
  name: string;
  input: Record<string, unknown>;
  /** After this (ISO time) the model gets `{"error": "timeout"}` instead. */
  expiresAt: string;
}

/** What a client tool returns; a thrown error is sent as `error` with its message. */
export type ToolHandler = (request: ToolCallRequest) => unknown | Promise<unknown>;

/** A client tool's answer: its output (any JSON), or why it failed. */
export type ToolAnswer = { output: unknown } | { error: string };

const key = (runId: string, toolCallId: string): string => `${runId} ${toolCallId}`;

/** The `tool_result` frame for an answer: `undefined` output goes as `null`, an error message is cut to the limit. */
export function toolResultFrame(toolCallId: string, answer: ToolAnswer): ClientFrame {
  if ("error" in answer) {
    const error = answer.error.length > 0 ? answer.error : "The tool failed.";
    return { type: "tool_result", toolCallId, error: error.slice(0, MAX_ERROR_CHARS) };
  }
  return { type: "tool_result", toolCallId, output: answer.output === undefined ? null : answer.output };
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : "The tool failed.";
}

/**
 * The pending approvals and tool calls of one connection. `observe` reads every server frame and answers what is new
 * to this connection; a run that resumes or ends takes its pending calls with it.
 */
export class PendingActions {
  readonly #approvals = new Map<string, ApprovalRequest>();
  readonly #tools = new Map<string, ToolCallRequest>();
  /** Approvals and tool calls already announced: a replay after a reconnect announces nothing again. */
  readonly #seenApprovals = new Set<string>();
  readonly #seenTools = new Set<string>();
  /** Tool calls this connection answered (or is answering): never run twice. */
  readonly #answered = new Set<string>();

  get approvals(): ApprovalRequest[] {
    return [...this.#approvals.values()];
  }
  get tools(): ToolCallRequest[] {
    return [...this.#tools.values()];
  }

  /** Takes a call to answer: false when this connection already answered it (the answer must not go twice). */
  take(runId: string, toolCallId: string): boolean {
    const k = key(runId, toolCallId);
    if (this.#answered.has(k)) return false;
    this.#answered.add(k);
    this.#tools.delete(k);
    return true;
  }

  /** The same for an answer given by its call id alone (`sendToolResult`): the pending call of that id, if any. */
  takeCall(toolCallId: string): boolean {
    const pending = this.tools.find((request) => request.toolCallId === toolCallId);
    if (pending !== undefined) return this.take(pending.runId, toolCallId);
    for (const k of this.#answered) if (k.endsWith(` ${toolCallId}`)) return false;
    this.#answered.add(key("", toolCallId));
    return true;
  }

  observe(frame: ServerFrame): { approvals: ApprovalRequest[]; tools: ToolCallRequest[] } {
    const fresh = { approvals: [] as ApprovalRequest[], tools: [] as ToolCallRequest[] };
    switch (frame.type) {
      case "run": {
        for (const [id, approval] of this.#approvals) {
          if (approval.runId !== frame.runId) continue;
          if (frame.status !== "requires_action" || !frame.actions?.some((a) => a.approvalId === id))
            this.#approvals.delete(id);
        }
        if (frame.status === "requires_action") {
          for (const action of frame.actions ?? []) {
            const request: ApprovalRequest = { ...action, runId: frame.runId };
            this.#approvals.set(action.approvalId, request);
            if (!this.#seenApprovals.has(action.approvalId)) {
              this.#seenApprovals.add(action.approvalId);
              fresh.approvals.push(request);
            }
          }
        } else if (frame.status !== "queued") {
          // Resumed or ended: every call it waited for was answered, decided or timed out.
          for (const [k, tool] of this.#tools) if (tool.runId === frame.runId) this.#tools.delete(k);
        }
        break;
      }
      case "entry":
        if (frame.entry.kind === "approval_decision" && frame.entry.decision !== undefined)
          this.#approvals.delete(frame.entry.decision.approvalId);
        break;
      case "tool_request": {
        const k = key(frame.runId, frame.toolCallId);
        if (this.#seenTools.has(k)) break;
        this.#seenTools.add(k);
        const request: ToolCallRequest = {
          runId: frame.runId,
          toolCallId: frame.toolCallId,
          name: frame.name,
          input: frame.input,
          expiresAt: frame.expiresAt,
        };
        if (!this.#answered.has(k)) this.#tools.set(k, request);
        fresh.tools.push(request);
        break;
      }
      default:
        break;
    }
    return fresh;
  }
}

/** Runs `handler` for a request and answers what it returned, or the message of what it threw. */
export async function runToolHandler(handler: ToolHandler, request: ToolCallRequest): Promise<ToolAnswer> {
  try {
    return { output: await handler(request) };
  } catch (error) {
    return { error: errorMessage(error) };
  }
}
