// Approvals and client tools in the widget (docs/widget.md#approvals-and-client-tools): approval cards, drawn by a
// module imported the first time one is needed, and the host page's tools, each call run once.
import type { ApprovalAction, ApprovalDecisionRecord, ClientFrame, ServerFrame } from "../shared/protocol";
import { lazy } from "./dom";
import type { Strings } from "./strings";
import { warnOnce } from "./widget-error";

/** Path of this build's content-hashed approval-card asset; substituted by scripts/build-widget.mjs. */
declare const __APPROVAL_VIEW__: string | undefined;

const APPROVAL_VIEW = typeof __APPROVAL_VIEW__ === "string" ? __APPROVAL_VIEW__ : "";

export interface CardDeps {
  strings: Strings;
  /** The widget's shadow root, which takes the card's stylesheet. */
  root: ShadowRoot;
  send(frame: ClientFrame): boolean;
  announce(text: string): void;
}

export type DrawCard = (el: HTMLElement, action?: ApprovalAction, decision?: ApprovalDecisionRecord) => void;

/** Draws cards through the on-demand module; `unavailable` when it cannot be loaded (the next card tries again). */
export function cardDrawer(d: CardDeps, base: string, unavailable: () => void): DrawCard {
  const load = lazy<typeof import("./approval-view")>(APPROVAL_VIEW, base);
  return (el, action, decision) => {
    // Calls keep their order: each waits on the same import.
    void load().then((m) => (m ? m.drawCard(d, el, action, decision) : unavailable()));
  };
}

/** What a host tool is called with besides its input. */
export interface ToolContext {
  threadId: string | undefined;
  runId: string;
  toolCallId: string;
}

export type ToolFunction = (input: unknown, ctx: ToolContext) => unknown;

type ToolRequestFrame = Extract<ServerFrame, { type: "tool_request" }>;

export interface ClientTools {
  register(name: string, fn: ToolFunction): void;
  /** A `tool_request`: runs a registered tool once per call; a replay sends the same answer again. */
  request(frame: ToolRequestFrame): void;
}

export function clientTools(
  send: (frame: ClientFrame) => boolean,
  threadId: () => string | undefined,
): ClientTools {
  const tools = new Map<string, ToolFunction>();
  const answers = new Map<string, Promise<ClientFrame>>();
  return {
    register(name, fn) {
      if (typeof name !== "string" || typeof fn !== "function")
        warnOnce("registerTool(name, fn) needs a name and a function.");
      else tools.set(name, fn);
    },
    request({ name, input, runId, toolCallId }) {
      const fn = tools.get(name);
      // Not ours: another tab or the host's own client may answer; the server times the call out otherwise.
      if (fn === undefined) return;
      let answer = answers.get(toolCallId);
      if (answer === undefined) {
        answer = (async () => fn(input, { threadId: threadId(), runId, toolCallId }))().then(
          (output): ClientFrame => ({ type: "tool_result", toolCallId, output: output ?? null }),
          (error: unknown): ClientFrame => ({
            type: "tool_result",
            toolCallId,
            error: String(error instanceof Error ? error.message : error).slice(0, 1000),
          }),
        );
        answers.set(toolCallId, answer);
      }
      void answer.then(send);
    },
  };
}
