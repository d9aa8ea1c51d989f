// A private launch's tool policy (docs/tools.md#tool-policy): which of the agent's tools a thread's model sees and may call.
import { z } from "zod";
import { TOOL_NAME_PATTERN } from "./artifact";
import { canonicalJson } from "./canonical-json";

/** Names in each of `allow` and `deny`. */
export const TOOL_POLICY_MAX_NAMES = 64;

const toolNames = z
  .array(
    z
      .string()
      .max(64)
      .regex(TOOL_NAME_PATTERN, "must be a tool name: a letter, then up to 63 letters, digits, '_' or '-'"),
  )
  .max(TOOL_POLICY_MAX_NAMES);

/**
 * A launch's `toolPolicy`. Names are checked for their shape only, never against the agent's tools: the version a
 * thread runs can change (an upgrade), and a policy denying a tool a later version adds must keep denying it.
 */
export const toolPolicySchema = z
  .strictObject({
    allow: toolNames
      .optional()
      .describe("Only these of the agent's tools (by name); absent: all of them. `[]` hides every tool."),
    deny: toolNames.optional().describe("None of these tools, even when `allow` names them."),
  })
  .describe(
    "Which of the agent's tools this thread's model sees and may call, until a later private launch replaces it; absent: all of them.",
  );

export interface ToolPolicy {
  readonly allow?: readonly string[];
  readonly deny?: readonly string[];
}

const sortedNames = (names: readonly string[]) => [...new Set(names)].sort();

/**
 * The one spelling a policy is stored and compared as: names sorted and once each, an empty `deny` dropped, and
 * null for a policy that hides nothing (absent, `{}`, `{deny: []}`). An empty `allow` stays: it hides every tool.
 */
export function normalToolPolicy(policy: ToolPolicy | null | undefined): ToolPolicy | null {
  if (policy === null || policy === undefined) return null;
  const allow = policy.allow === undefined ? undefined : sortedNames(policy.allow);
  const deny = policy.deny === undefined || policy.deny.length === 0 ? undefined : sortedNames(policy.deny);
  if (allow === undefined && deny === undefined) return null;
  return { ...(allow !== undefined ? { allow } : {}), ...(deny !== undefined ? { deny } : {}) };
}

/** The stored text of a policy (canonical JSON), or null for none. */
export function toolPolicyText(policy: ToolPolicy | null | undefined): string | null {
  const normal = normalToolPolicy(policy);
  return normal === null ? null : canonicalJson(normal);
}

/** A policy hiding every tool: what an unreadable stored policy counts as, so a fault never widens what may run. */
const HIDES_ALL: ToolPolicy = { allow: [] };

/** Stored policy text read back; null is none. */
export function parseToolPolicyText(text: string | null): ToolPolicy | null {
  if (text === null) return null;
  try {
    const parsed = toolPolicySchema.safeParse(JSON.parse(text));
    return parsed.success ? normalToolPolicy(parsed.data) : HIDES_ALL;
  } catch {
    return HIDES_ALL;
  }
}

/** Whether the policy lets the model see and call the tool named `name` (no policy: every tool). */
export function toolPermitted(policy: ToolPolicy | null | undefined, name: string): boolean {
  if (policy === null || policy === undefined) return true;
  if (policy.allow !== undefined && !policy.allow.includes(name)) return false;
  return policy.deny === undefined || !policy.deny.includes(name);
}
