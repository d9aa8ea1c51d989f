// Each run as the AI SDK chat should see it (docs/api.md#ai-sdk-transport): the frames of a run become one ordered log
// of UI message pieces (text, tool calls, approval requests and decisions, steps), kept whether or not a chat stream
// is open, so a continuation shows what happened meanwhile and a resume replays it all.
import type { UIMessageChunk } from "ai";
import type { ApprovalAction, RunStatus, ServerFrame, WireEntry } from "../shared/protocol";

/** Text streams as it comes; anything else is one chunk (a text part is closed before it). */
export type LogItem = { kind: "text"; delta: string } | { kind: "chunk"; chunk: UIMessageChunk };

/** A tool call of the run, as far as the frames told. */
export interface RunToolCall {
  toolCallId: string;
  name: string;
  input: Record<string, unknown>;
  /** The approval it waits for (or waited for). */
  approval?: ApprovalAction;
  /** Known once the `approval_decision` entry arrived. */
  decided?: boolean;
  /** A client tool: a `tool_request` asked the page to run it. */
  client?: boolean;
}

const TERMINAL: ReadonlySet<RunStatus> = new Set(["succeeded", "failed", "aborted"]);

export function metadataOfEntry(entry: WireEntry) {
  return {
    entryId: entry.id,
    parentId: entry.parentId,
    ...(entry.runId !== null ? { runId: entry.runId } : {}),
    ...(entry.status !== undefined ? { status: entry.status } : {}),
    ...(entry.authorName !== undefined ? { authorName: entry.authorName } : {}),
    ...(entry.attachments !== undefined ? { attachments: entry.attachments } : {}),
  };
}

/** One run's log. `shown` is how far a chat has been given it (a continuation starts there). */
export class RunLog {
  readonly items: LogItem[] = [{ kind: "chunk", chunk: { type: "start-step" } }];
  status: RunStatus | undefined;
  /** Why it failed, when it did. */
  error: { code: string; message: string } | undefined;
  /** Every delta's text, in order (the stored reply is checked against it when sealed). */
  text = "";
  entry: WireEntry | undefined;
  shown = 0;
  readonly calls = new Map<string, RunToolCall>();
  /** Approval id → tool call id. */
  readonly approvals = new Map<string, string>();
  /** Whether the step being written holds a tool call (a new step starts when the run goes on). */
  #stepHasTools = false;

  constructor(readonly runId: string) {}

  get ended(): boolean {
    return this.status !== undefined && TERMINAL.has(this.status);
  }

  /** Approvals still waiting for a decision. */
  get undecided(): RunToolCall[] {
    return [...this.calls.values()].filter((call) => call.approval !== undefined && !call.decided);
  }

  observe(frame: ServerFrame): void {
    switch (frame.type) {
      case "delta":
        this.text += frame.text;
        this.items.push({ kind: "text", delta: frame.text });
        break;
      case "run":
        if (frame.error !== undefined) this.error = frame.error;
        this.#status(frame.status);
        for (const action of frame.status === "requires_action" ? (frame.actions ?? []) : [])
          this.#approval(action);
        break;
      case "tool_request":
        this.#toolRequest(frame);
        break;
      case "entry":
        this.observeEntry(frame.entry);
        break;
      default:
        break;
    }
  }

  observeEntry(entry: WireEntry): void {
    if (entry.kind === "approval_request" && entry.approval !== undefined) this.#approval(entry.approval);
    else if (entry.kind === "tool_request" && entry.toolRequest !== undefined)
      this.#toolRequest(entry.toolRequest);
    else if (entry.kind === "approval_decision" && entry.decision !== undefined) {
      const { approvalId, decision, reason } = entry.decision;
      const call = this.calls.get(this.approvals.get(approvalId) ?? "");
      if (call === undefined || call.decided) return;
      call.decided = true;
      const approved = decision === "approve";
      this.#chunk({
        type: "tool-approval-response",
        approvalId,
        approved,
        ...(reason !== null ? { reason } : {}),
      });
      if (!approved) this.#chunk({ type: "tool-output-denied", toolCallId: call.toolCallId });
    } else if (entry.kind === "message" && entry.role === "assistant" && this.entry === undefined) {
      this.entry = entry;
      // The stored reply is the authority: what the deltas missed of it (nothing, normally) is added.
      if (entry.text.startsWith(this.text) && entry.text.length > this.text.length)
        this.items.push({ kind: "text", delta: entry.text.slice(this.text.length) });
      this.text = entry.text;
      this.#chunk({ type: "message-metadata", messageMetadata: metadataOfEntry(entry) });
    }
  }

  #status(status: RunStatus): void {
    const before = this.status;
    this.status = status;
    // The run goes on after its calls were decided or answered: what follows is the model's next step.
    if (before === "requires_action" && status === "running") this.#step();
    // An ended run leaves no step of finished tool calls last, which would make a chat send them again.
    if (TERMINAL.has(status) && this.#stepHasTools) this.#step();
  }

  #step(): void {
    this.items.push({ kind: "chunk", chunk: { type: "start-step" } });
    this.#stepHasTools = false;
  }

  #approval(action: ApprovalAction): void {
    if (this.approvals.has(action.approvalId)) return;
    this.approvals.set(action.approvalId, action.toolCallId);
    const call = this.#call(action, true);
    call.approval = action;
    const { title, description, by, expiresAt } = action;
    this.#chunk({
      type: "tool-approval-request",
      approvalId: action.approvalId,
      toolCallId: action.toolCallId,
      // The part's `approval.descriptor`: what an approval card shows besides the input.
      approvalDescriptor: {
        by,
        expiresAt,
        ...(title !== undefined ? { title } : {}),
        ...(description !== undefined ? { description } : {}),
      },
    });
  }

  #toolRequest(request: { toolCallId: string; name: string; input: Record<string, unknown> }): void {
    const known = this.calls.get(request.toolCallId);
    if (known?.client) return;
    const call = known ?? this.#call(request, false);
    call.client = true;
    // A client tool that needed approval first: its part moves on to input-available, and the chat's onToolCall runs.
    if (known !== undefined) this.#toolInput(call, false);
  }

  /** The call's part, first seen: by its approval (the server runs it, unless a tool_request follows) or its request. */
  #call(source: { toolCallId: string; name: string; input: Record<string, unknown> }, server: boolean) {
    const known = this.calls.get(source.toolCallId);
    if (known !== undefined) return known;
    const call: RunToolCall = { toolCallId: source.toolCallId, name: source.name, input: source.input };
    this.calls.set(call.toolCallId, call);
    this.#toolInput(call, server);
    return call;
  }

  #toolInput(call: RunToolCall, server: boolean): void {
    this.#stepHasTools = true;
    this.#chunk({
      type: "tool-input-available",
      toolCallId: call.toolCallId,
      toolName: call.name,
      input: call.input,
      // The server runs it, or the page does (onToolCall): said either way, as a part keeps what it was told last.
      providerExecuted: server,
      ...(call.approval?.title !== undefined ? { title: call.approval.title } : {}),
    });
  }

  #chunk(chunk: UIMessageChunk): void {
    this.items.push({ kind: "chunk", chunk });
  }
}

/** Every run this connection heard of; the oldest ended runs are forgotten past a bound. */
export class RunLogs {
  readonly #runs = new Map<string, RunLog>();
  static readonly KEEP = 50;

  get(runId: string): RunLog {
    let log = this.#runs.get(runId);
    if (log === undefined) {
      log = new RunLog(runId);
      this.#runs.set(runId, log);
      this.#prune();
    }
    return log;
  }

  ids(): string[] {
    return [...this.#runs.keys()];
  }

  observe(frame: ServerFrame): void {
    const runId =
      frame.type === "run" || frame.type === "delta" || frame.type === "tool_request"
        ? frame.runId
        : frame.type === "entry"
          ? frame.entry.runId
          : null;
    if (runId !== null) this.get(runId).observe(frame);
  }

  #prune(): void {
    if (this.#runs.size <= RunLogs.KEEP) return;
    for (const [runId, log] of this.#runs) {
      if (this.#runs.size <= RunLogs.KEEP) break;
      if (log.ended) this.#runs.delete(runId);
    }
  }
}
