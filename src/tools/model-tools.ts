// The function tools a run hands its model: the artifact's (identity hidden) its thread's tool policy permits, then
// the built-ins it enables.
import type { LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import type { Artifact } from "../control/artifact";
import { type ToolPolicy, toolPermitted } from "../control/tool-policy";
import { handoffEnabled, requestHandoffTool } from "./request-handoff";
import { toolDefinitions } from "./tool-definitions";

/**
 * Every tool the model of a run on `artifact` sees, in the order it is sent; empty when none. A tool the thread's
 * policy leaves out is not listed (docs/tools.md#tool-policy); the policy names the artifact's tools only, so the
 * built-in `request_handoff` follows the artifact's `handoff` setting alone.
 */
export function modelTools(artifact: Artifact, policy: ToolPolicy | null): LanguageModelV4FunctionTool[] {
  return [
    ...toolDefinitions((artifact.tools ?? []).filter((tool) => toolPermitted(policy, tool.name))),
    ...(handoffEnabled(artifact) ? [requestHandoffTool] : []),
  ];
}
