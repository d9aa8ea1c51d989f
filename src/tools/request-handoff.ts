// The built-in `request_handoff` tool of an artifact with `handoff: {enabled: true}` (docs/protocol.md): the model asks for a
// person; the runtime records the request and starts the handoff once the reply is sealed.
import type { JSONValue, LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import { z } from "zod";
import { type Artifact, REQUEST_HANDOFF_TOOL } from "../control/artifact";

export { REQUEST_HANDOFF_TOOL };

const MAX_REASON_CHARS = 500;

export const requestHandoffTool: LanguageModelV4FunctionTool = {
  type: "function",
  name: REQUEST_HANDOFF_TOOL,
  description:
    "Hand the conversation to a person of the support team. Use it when the user asks for a human or when you " +
    "cannot help. Finish your reply to the user; a person answers after it.",
  inputSchema: {
    type: "object",
    properties: {
      reason: {
        type: "string",
        description: "Why a person is needed, in one sentence.",
        maxLength: MAX_REASON_CHARS,
      },
    },
  },
};

export function handoffEnabled(artifact: Artifact): boolean {
  return artifact.handoff?.enabled === true;
}

/** The model's reason, when it gave a readable one (cut to 500 characters); the model's input is never trusted. */
export function handoffReason(input: unknown): string | undefined {
  const parsed = z.object({ reason: z.string() }).safeParse(input);
  if (!parsed.success) return undefined;
  const reason = parsed.data.reason.trim().slice(0, MAX_REASON_CHARS);
  return reason === "" ? undefined : reason;
}

/** What the model is told after asking. */
export const HANDOFF_REQUESTED_OUTPUT: JSONValue = {
  status: "handoff_requested",
  message: "A person from the team will take over after this reply. Tell the user briefly.",
};
