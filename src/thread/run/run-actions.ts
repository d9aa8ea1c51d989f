import { canonicalJson, sha256Hex } from "../../control/canonical-json";
import type { ApprovalNeed } from "../../control/tool-approval";
import { checkToolOutput } from "../../control/tool-output";
import { fail, ok, type Result } from "../../errors";
import type { ApprovalDecision, ServerFrame } from "../../shared/protocol";
import type { ToolAnswer } from "../../shared/thread-api";
import { enqueueApproval } from "../../storage/projection/approval-outbox";
import type { JsonValue } from "../../storage/redact";
import { type ActionSettlement, decisionOf, type RunAction } from "../../storage/thread/action-store";
import type { Entry } from "../../storage/thread/entry-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { recordThreadEvent } from "../../storage/thread/thread-events";
import type { Tool } from "../../tools/tool-definitions";
import { toWireEntry } from "./frames";
import type { StreamReceivers } from "./live-run";
import { approvalActionOf, approvalView, iso, toolRequestFrame, toolRequestOf } from "./run-action-views";
import type { RunStores } from "./run-stores";

/** Who decides through which door: the thread's user (launch token) or the tenant (sk_ key). */
export type DeciderKind = "user" | "tenant";

export interface ActionDeps {
  storage: DurableObjectStorage;
  stores: RunStores;
  receivers: StreamReceivers;
  binding: ThreadBinding;
  now: () => number;
}

const randomId = (prefix: string): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `${prefix}_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
};

/** The entry a run's next action or reply goes below: its newest entry, else its user message. */
function tailOf(stores: RunStores, run: { id: string; userEntryId: string | null }): string | null {
  return stores.entries.lastOfRun(run.id)?.id ?? run.userEntryId;
}

function appendActionEntry(
  deps: ActionDeps,
  run: { id: string; userEntryId: string | null },
  kind: "approval_request" | "approval_decision" | "tool_request",
  body: unknown,
): Entry | null {
  const appended = deps.stores.entries.append({
    parentId: tailOf(deps.stores, run),
    kind,
    runId: run.id,
    body,
    select: true,
  });
  return appended.ok ? appended.value.entry : null;
}

function eventBase(deps: ActionDeps, action: RunAction) {
  return {
    threadId: deps.binding.threadId,
    agentId: deps.binding.agentId,
    version: deps.binding.version,
    runId: action.runId,
    toolCallId: action.toolCallId,
    toolName: action.name,
  };
}

/** A client tool's request: its row, its entry and its `tool.requested` event, inside the caller's transaction. */
function storeClientRequest(
  deps: ActionDeps,
  run: { id: string; userEntryId: string | null },
  call: { toolCallId: string; name: string; input: JsonValue; inputDigest: string },
  timeoutMs: number,
): { action: RunAction; entry: Entry | null } {
  const action = deps.stores.actions.create({
    id: randomId("tcr"),
    runId: run.id,
    kind: "client",
    toolCallId: call.toolCallId,
    name: call.name,
    input: call.input,
    inputDigest: call.inputDigest,
    artifactDigest: deps.binding.digest,
    expiresAt: deps.now() + timeoutMs,
  });
  const entry = appendActionEntry(deps, run, "tool_request", { toolRequest: toolRequestOf(action) });
  recordThreadEvent(
    deps.storage,
    { type: "tool.requested", data: { ...eventBase(deps, action), expiresAt: iso(action.expiresAt) } },
    deps.now(),
  );
  return { action, entry };
}

function sendEntry(deps: ActionDeps, entry: Entry | null): void {
  if (entry !== null) deps.receivers.send({ type: "entry", entry: toWireEntry(entry) });
}

/** Asks for a decision on a call: its approval row, `approval_request` entry and `approval.requested` event. */
export async function requestApproval(
  deps: ActionDeps,
  run: { id: string; userEntryId: string | null },
  call: { toolCallId: string; name: string; input: JsonValue },
  need: ApprovalNeed,
): Promise<RunAction> {
  const inputDigest = await sha256Hex(canonicalJson(call.input));
  const done = deps.storage.transactionSync(() => {
    const action = deps.stores.actions.create({
      id: randomId("apr"),
      runId: run.id,
      kind: "approval",
      toolCallId: call.toolCallId,
      name: call.name,
      input: call.input,
      inputDigest,
      artifactDigest: deps.binding.digest,
      approver: need.by,
      onTimeout: need.onTimeout,
      ...(need.title !== undefined ? { title: need.title } : {}),
      ...(need.description !== undefined ? { description: need.description } : {}),
      expiresAt: deps.now() + need.timeoutMs,
    });
    const wire = approvalActionOf(action);
    const entry = appendActionEntry(deps, run, "approval_request", { approval: wire });
    recordThreadEvent(
      deps.storage,
      {
        type: "approval.requested",
        data: {
          ...eventBase(deps, action),
          approvalId: action.id,
          input: call.input,
          by: wire.by,
          expiresAt: wire.expiresAt,
        },
      },
      deps.now(),
    );
    enqueueApproval(deps.storage, approvalView(deps.binding, action), action.revision, deps.now());
    return { action, entry };
  });
  sendEntry(deps, done.entry);
  return done.action;
}

/** Asks the page or app holding the thread to run a client tool: its row, entry, event and `tool_request` frame. */
export async function requestClientTool(
  deps: ActionDeps,
  run: { id: string; userEntryId: string | null },
  call: { toolCallId: string; name: string; input: JsonValue },
  timeoutMs: number,
): Promise<RunAction> {
  const inputDigest = await sha256Hex(canonicalJson(call.input));
  const done = deps.storage.transactionSync(() =>
    storeClientRequest(deps, run, { ...call, inputDigest }, timeoutMs),
  );
  sendEntry(deps, done.entry);
  deps.receivers.send(toolRequestFrame(done.action));
  return done.action;
}

/** What settling one action wrote, to be told to the thread's sockets once committed. */
interface Settled {
  action: RunAction;
  entries: (Entry | null)[];
  frames: ServerFrame[];
}

/**
 * Settles an approval inside the caller's transaction: its row, its `approval_decision` entry, `approval.decided`,
 * the D1 projection; an approved client tool is asked of the client next.
 */
function settleApproval(
  deps: ActionDeps,
  action: RunAction,
  how: ActionSettlement,
  clientTimeoutMs: number | null,
): Settled | null {
  const settled = deps.stores.actions.settle(action.id, how);
  if (settled === null) return null;
  const run = deps.stores.runs.get(action.runId);
  const runRef = { id: action.runId, userEntryId: run?.userEntryId ?? null };
  const decision: ApprovalDecision = decisionOf(settled.status);
  const entries: (Entry | null)[] = [
    appendActionEntry(deps, runRef, "approval_decision", {
      decision: { approvalId: settled.id, decision, by: how.decidedBy, reason: settled.reason },
    }),
  ];
  recordThreadEvent(
    deps.storage,
    {
      type: "approval.decided",
      data: {
        ...eventBase(deps, settled),
        approvalId: settled.id,
        decision,
        decidedBy: how.decidedBy,
        reason: settled.reason,
      },
    },
    deps.now(),
  );
  enqueueApproval(deps.storage, approvalView(deps.binding, settled), settled.revision, deps.now());
  const frames: ServerFrame[] = [];
  if (settled.status === "approved" && clientTimeoutMs !== null) {
    const asked = storeClientRequest(
      deps,
      runRef,
      {
        toolCallId: settled.toolCallId,
        name: settled.name,
        input: settled.input,
        inputDigest: settled.inputDigest,
      },
      clientTimeoutMs,
    );
    entries.push(asked.entry);
    frames.push(toolRequestFrame(asked.action));
  }
  return { action: settled, entries, frames };
}

function announce(deps: ActionDeps, settled: Settled): void {
  for (const entry of settled.entries) sendEntry(deps, entry);
  for (const frame of settled.frames) deps.receivers.send(frame);
}

/** The client-tool timeout of a tool that runs in the client once approved; null for a server tool. */
export type ClientTimeoutOf = (toolName: string) => number | null;

/**
 * A person's decision, exactly once: an unknown id (or another thread's) is `not_found`, a decider the tool's `by`
 * excludes `forbidden`, a decided one `conflict` (`already_decided`), one past its time `conflict` (`expired`).
 */
export function decideApproval(
  deps: ActionDeps,
  input: { approvalId: string; decision: ApprovalDecision; reason?: string; by: DeciderKind },
  clientTimeoutOf: ClientTimeoutOf,
): Result<RunAction> {
  const action = deps.stores.actions.get(input.approvalId);
  if (action === null || action.kind !== "approval") return fail("not_found", "Approval not found.");
  const approver = action.approver ?? "any";
  if (approver !== "any" && approver !== input.by) {
    return fail(
      "forbidden",
      approver === "user"
        ? "Only the conversation's user may decide this approval."
        : "Only the agent's owner may decide this approval.",
    );
  }
  if (action.status === "expired") return { ...fail("conflict", "The approval expired."), reason: "expired" };
  if (action.status !== "pending") {
    return { ...fail("conflict", "The approval was already decided."), reason: "already_decided" };
  }
  if (deps.now() >= action.expiresAt) {
    expireActions(deps, clientTimeoutOf, [action]);
    return { ...fail("conflict", "The approval expired."), reason: "expired" };
  }
  const settled = deps.storage.transactionSync(() =>
    settleApproval(
      deps,
      action,
      {
        status: input.decision === "approve" ? "approved" : "denied",
        decidedBy: input.by,
        reason: input.reason ?? null,
      },
      clientTimeoutOf(action.name),
    ),
  );
  if (settled === null) {
    return { ...fail("conflict", "The approval was already decided."), reason: "already_decided" };
  }
  announce(deps, settled);
  return ok(settled.action);
}

/**
 * A client's answer to a tool request: the first valid one wins. An unknown call is `bad_request` (nothing stored),
 * an answered one `conflict`; an output over the cap or failing the tool's `outputSchema` settles the call with an
 * error for the model and is refused with its issues.
 */
export function answerToolRequest(
  deps: ActionDeps,
  input: { toolCallId: string; output?: unknown; error?: string },
  toolNamed: (name: string) => Tool | null,
): Result<ToolAnswer> {
  const action = deps.stores.actions.pendingClientCall(input.toolCallId);
  if (action === null) return fail("bad_request", "No tool request of this thread has that toolCallId.");
  if (action.status !== "pending") return fail("conflict", "This tool request was already answered.");
  if ((input.output === undefined) === (input.error === undefined)) {
    return fail("bad_request", "Send exactly one of `output` and `error`.", { fields: ["output", "error"] });
  }
  let how: ActionSettlement;
  let answer: ToolAnswer = { status: "answered" };
  if (input.error !== undefined) {
    how = { status: "answered", decidedBy: "user", output: { error: input.error }, isError: true };
  } else {
    const tool = toolNamed(action.name);
    const issues = tool === null ? [] : checkToolOutput(tool, input.output);
    if (issues.length > 0) {
      answer = { status: "refused", issues };
      how = {
        status: "answered",
        decidedBy: "user",
        output: {
          error: "The tool's answer was refused.",
          issues: issues.map((i) => ({ path: i.path, message: i.message })),
        },
        isError: true,
      };
    } else {
      how = { status: "answered", decidedBy: "user", output: input.output as JsonValue };
    }
  }
  const settled = deps.stores.actions.settle(action.id, how);
  if (settled === null) return fail("conflict", "This tool request was already answered.");
  return ok(answer);
}

/**
 * Settles every given pending action whose time ran out: an approval by its `onTimeout` (denied; `handoff` also asks
 * for a person), a client tool with `{"error": "timeout"}`. Returns the runs whose handoff was asked.
 */
export function expireActions(
  deps: ActionDeps,
  clientTimeoutOf: ClientTimeoutOf,
  due: readonly RunAction[],
): { handoffRuns: string[] } {
  const handoffRuns: string[] = [];
  for (const action of due) {
    const settled = deps.storage.transactionSync((): Settled | null => {
      if (action.kind === "client") {
        const done = deps.stores.actions.settle(action.id, {
          status: "expired",
          decidedBy: "timeout",
          output: { error: "timeout" },
          isError: true,
        });
        return done === null ? null : { action: done, entries: [], frames: [] };
      }
      return settleApproval(
        deps,
        action,
        { status: "expired", decidedBy: "timeout", reason: "timeout" },
        clientTimeoutOf(action.name),
      );
    });
    if (settled === null) continue;
    if (action.kind === "approval" && action.onTimeout === "handoff") handoffRuns.push(action.runId);
    announce(deps, settled);
  }
  return { handoffRuns };
}

/** Cancels a run's pending actions (`by: "system"`): the run ended before they were decided or answered. */
export function cancelActions(deps: ActionDeps, runId: string, reason: string): void {
  for (const action of deps.stores.actions.ofRun(runId)) {
    if (action.status !== "pending") continue;
    const settled = deps.storage.transactionSync((): Settled | null => {
      if (action.kind === "client") {
        const done = deps.stores.actions.settle(action.id, {
          status: "cancelled",
          decidedBy: "system",
          reason,
          output: { error: reason },
          isError: true,
        });
        return done === null ? null : { action: done, entries: [], frames: [] };
      }
      return settleApproval(deps, action, { status: "cancelled", decidedBy: "system", reason }, null);
    });
    if (settled !== null) announce(deps, settled);
  }
}
