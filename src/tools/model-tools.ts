// The function tools a run hands its model: the artifact's (identity hidden), then the built-ins it enables.
import type { LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import type { Artifact } from "../control/artifact";
import { handoffEnabled, requestHandoffTool } from "./request-handoff";
import { toolDefinitions } from "./tool-definitions";

/** Every tool the model of a run on `artifact` sees, in the order it is sent; empty when none. */
export function modelTools(artifact: Artifact): LanguageModelV4FunctionTool[] {
  return [
    ...toolDefinitions(artifact.tools ?? []),
    ...(handoffEnabled(artifact) ? [requestHandoffTool] : []),
  ];
}
