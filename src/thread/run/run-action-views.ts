// How a waiting run's actions look: on the wire (a run's `actions`, `tool_request` frames, action entries), to the
// tenant's API (docs/api.md#approvals), and to the model (the tool result each settled call gets).
import type { JSONValue } from "@ai-sdk/provider";
import type { ToolCallOutcome, TurnStep } from "../../models/turn";
import type { ApprovalAction, JsonObject, ServerFrame, ToolRequest } from "../../shared/protocol";
import { approvalViewOf } from "../../storage/projection/approval-outbox";
import type { JsonValue } from "../../storage/redact";
import type { RunAction } from "../../storage/thread/action-store";
import type { RunStores } from "./run-stores";

export const iso = (ms: number): string => new Date(ms).toISOString();

const objectInput = (input: JsonValue): JsonObject =>
  typeof input === "object" && input !== null && !Array.isArray(input) ? input : {};

/** The wire form of a pending approval (a run's `actions`, an `approval_request` entry). */
export function approvalActionOf(action: RunAction): ApprovalAction {
  return {
    approvalId: action.id,
    toolCallId: action.toolCallId,
    name: action.name,
    input: objectInput(action.input),
    by: action.approver ?? "any",
    expiresAt: iso(action.expiresAt),
    ...(action.title !== null ? { title: action.title } : {}),
    ...(action.description !== null ? { description: action.description } : {}),
  };
}

export function toolRequestOf(action: RunAction): ToolRequest {
  return {
    toolCallId: action.toolCallId,
    name: action.name,
    input: objectInput(action.input),
    expiresAt: iso(action.expiresAt),
  };
}

/** What an approval looks like to the tenant's API, the D1 projection and the console (docs/api.md#approvals). */
export const approvalView = approvalViewOf;

export function toolRequestFrame(action: RunAction): ServerFrame {
  return { type: "tool_request", runId: action.runId, ...toolRequestOf(action) };
}

/** The tool result the model gets for a settled action; null while it waits, or for an approved server tool not run. */
export function outcomeOf(action: RunAction): ToolCallOutcome | null {
  if (action.status === "pending") return null;
  if (action.kind === "client" || action.output !== null) {
    return { output: (action.output ?? null) as JSONValue, ...(action.isError ? { isError: true } : {}) };
  }
  if (action.status === "approved") return null;
  return { output: { denied: true, reason: action.reason } };
}

/** The approvals of a run still waiting, in the order the model made the calls: the `actions` of its `run` frame. */
export function pendingApprovals(stores: RunStores, runId: string): ApprovalAction[] {
  // Rows asked within the same millisecond tie on their time, so the waiting step's call order decides.
  const order = new Map<string, number>();
  for (const step of parkedSteps(stores, runId) ?? []) {
    for (const call of step.toolCalls) order.set(call.toolCallId, order.size);
  }
  const position = (action: RunAction) => order.get(action.toolCallId) ?? order.size;
  return stores.actions
    .ofRun(runId)
    .filter((a) => a.kind === "approval" && a.status === "pending")
    .sort((a, b) => position(a) - position(b))
    .map(approvalActionOf);
}

/** The `run` frame of a waiting run: its status and the approvals it waits for. */
export function parkedFrame(stores: RunStores, run: { id: string }): ServerFrame {
  return { type: "run", runId: run.id, status: "requires_action", actions: pendingApprovals(stores, run.id) };
}

/** `tool_request` frames for every client tool call still waiting (what a socket saying hello is told again). */
export function pendingToolRequestFrames(stores: RunStores): ServerFrame[] {
  return stores.actions
    .pending()
    .filter((a) => a.kind === "client")
    .map(toolRequestFrame);
}

/** Whether every call a waiting run's last step asked about is settled (the run may go on). */
export function allSettled(stores: RunStores, runId: string): boolean {
  return stores.actions.ofRun(runId).every((a) => a.status !== "pending");
}

/** The stored steps of a waiting run. */
export function parkedSteps(stores: RunStores, runId: string): TurnStep[] | null {
  const steps = stores.actions.parked(runId);
  return Array.isArray(steps) ? (steps as unknown as TurnStep[]) : null;
}

/**
 * A waiting run's steps with what is known of each waiting call (a run that ends waiting keeps whole pairs): its
 * settled answer, else the cancellation.
 */
export function settledSteps(steps: readonly TurnStep[], actions: readonly RunAction[]): TurnStep[] {
  return steps.map((step) => {
    const waiting = new Set(step.waiting ?? []);
    const { waiting: _settled, ...rest } = step;
    return {
      ...rest,
      toolCalls: step.toolCalls.map((call) => {
        if (!waiting.has(call.toolCallId)) return call;
        const action = actions.filter((a) => a.toolCallId === call.toolCallId).at(-1);
        const outcome = action === undefined ? null : outcomeOf(action);
        return { ...call, outcome: outcome ?? { output: { denied: true, reason: "cancelled" } } };
      }),
    };
  });
}
