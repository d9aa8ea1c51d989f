// Whether a tool call waits for a person's decision, and where a tool runs, from the artifact alone (docs/tools.md#approvals).
import type { Approver } from "../shared/protocol";
import {
  APPROVAL_TIMEOUT_MS,
  type APPROVAL_TIMEOUT_OUTCOMES,
  CLIENT_TOOL_TIMEOUT_MS,
  type ArtifactTool as Tool,
} from "./artifact";
import { parsePointer } from "./tool-identity";

/** What a call that needs approval waits for: who may decide, for how long, and what silence becomes. */
export interface ApprovalNeed {
  by: Approver;
  timeoutMs: number;
  onTimeout: (typeof APPROVAL_TIMEOUT_OUTCOMES)[number];
  title?: string;
  description?: string;
}

type Rule = { pointer: string; op: string; value?: unknown };

const MISSING = Symbol("missing");

/** The input's value at a pointer (through objects, and arrays by index), or MISSING. */
function valueAt(input: unknown, pointer: string): unknown {
  const path = parsePointer(pointer);
  if (path === null) return MISSING;
  let node: unknown = input;
  for (const token of path) {
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= node.length) return MISSING;
      node = node[Number(token)];
    } else if (typeof node === "object" && node !== null && Object.hasOwn(node, token)) {
      node = (node as Record<string, unknown>)[token];
    } else {
      return MISSING;
    }
  }
  return node;
}

/** JSON equality: same primitive, or arrays and objects equal member by member (key order aside). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, index) => jsonEqual(item, b[index]))
    );
  }
  const aKeys = Object.keys(a);
  const bRecord = b as Record<string, unknown>;
  return (
    aKeys.length === Object.keys(b).length &&
    aKeys.every(
      (key) => Object.hasOwn(b, key) && jsonEqual((a as Record<string, unknown>)[key], bRecord[key]),
    )
  );
}

/**
 * One rule against the input. A missing value matches only `ne`; gt/gte/lt/lte compare numbers only; `in` asks
 * whether the rule's list holds the value.
 */
export function ruleMatches(rule: Rule, input: unknown): boolean {
  const actual = valueAt(input, rule.pointer);
  if (actual === MISSING) return rule.op === "ne";
  const expected = rule.value;
  switch (rule.op) {
    case "eq":
      return jsonEqual(actual, expected);
    case "ne":
      return !jsonEqual(actual, expected);
    case "in":
      return Array.isArray(expected) && expected.some((item) => jsonEqual(item, actual));
  }
  if (typeof actual !== "number" || typeof expected !== "number") return false;
  switch (rule.op) {
    case "gt":
      return actual > expected;
    case "gte":
      return actual >= expected;
    case "lt":
      return actual < expected;
    case "lte":
      return actual <= expected;
    default:
      return false;
  }
}

/**
 * What a call of `tool` with `input` (as the runtime will send it, identity written) waits for, or null when it
 * needs no approval: `approval` absent or `never`, or rules of which none matches. `always` and rules without
 * `when` always need one.
 */
export function approvalFor(tool: Tool, input: unknown): ApprovalNeed | null {
  const approval = tool.approval;
  if (approval === undefined || approval === "never") return null;
  const policy = approval === "always" ? {} : approval;
  if (policy.when !== undefined && !policy.when.some((rule) => ruleMatches(rule, input))) return null;
  return {
    by: policy.by ?? "any",
    timeoutMs: policy.timeoutMs ?? APPROVAL_TIMEOUT_MS.default,
    onTimeout: policy.onTimeout ?? "deny",
    ...(policy.title !== undefined ? { title: policy.title } : {}),
    ...(policy.description !== undefined ? { description: policy.description } : {}),
  };
}

/** Where a tool runs: its webhook (`server`, the default) or the page or app holding the thread (`client`). */
export function toolExecutor(tool: Tool): "server" | "client" {
  return tool.executor ?? "server";
}

/** How long a client tool's answer may take before the model gets `{"error": "timeout"}` (default 60 s). */
export function clientToolTimeoutMs(tool: Tool): number {
  return tool.timeoutMs ?? CLIENT_TOOL_TIMEOUT_MS.default;
}
