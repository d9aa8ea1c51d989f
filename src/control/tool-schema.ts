// An artifact's tool: a signed webhook (`server`) or a function of the page holding the thread (`client`), with its
// approval rules and output schema (docs/tools.md).
import { z } from "zod";
import { APPROVERS } from "../shared/protocol";
import {
  IDENTITY_FACTS,
  identityProblems,
  MAX_IDENTITY_POINTERS,
  MAX_POINTER_LENGTH,
  parsePointer,
} from "./tool-identity";
import { toolUrlProblem } from "./url-policy";

/** An alias of a tenant secret (`PUT /v1/secrets/:alias`), never its value. */
export const secretAlias = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be a secret alias: lowercase letters, digits, '-' or '_'");

/** A tool's name: a letter, then up to 63 letters, digits, '_' or '-' (a launch's `toolPolicy` names tools so too). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** Where a tool runs: the tenant's webhook (`server`, the default) or the page or app holding the thread (`client`). */
export const TOOL_EXECUTORS = ["server", "client"] as const;
/** How an approval rule compares the input's value at `pointer` with its `value` (docs/tools.md#approvals). */
export const APPROVAL_OPS = ["eq", "ne", "gt", "gte", "lt", "lte", "in"] as const;
export const NUMERIC_APPROVAL_OPS: readonly string[] = ["gt", "gte", "lt", "lte"];
/** What an approval nobody decided in time turns into. */
export const APPROVAL_TIMEOUT_OUTCOMES = ["deny", "handoff"] as const;
export const MAX_APPROVAL_RULES = 16;

/** A server tool's call time: 100 ms–30 s, default 10 s (src/tools/execute-tool.ts). */
export const SERVER_TOOL_TIMEOUT_MS = { min: 100, max: 30_000 } as const;
/** How long a client tool's answer may take: 1 s–10 min, default 60 s (docs/tools.md#client-tools). */
export const CLIENT_TOOL_TIMEOUT_MS = { min: 1_000, max: 600_000, default: 60_000 } as const;
/** How long an approval may wait for its decision: 10 s–7 days, default 10 min (docs/tools.md#approvals). */
export const APPROVAL_TIMEOUT_MS = { min: 10_000, max: 604_800_000, default: 600_000 } as const;

const approvalRuleSchema = z
  .strictObject({
    pointer: z
      .string()
      .max(MAX_POINTER_LENGTH)
      .refine((pointer) => parsePointer(pointer) !== null, {
        message: "must be a JSON pointer (RFC 6901) to a property of the input, such as '/amount'",
      })
      .describe("A JSON pointer (RFC 6901) into the model's input, such as `/amount` or `/refund/currency`."),
    op: z
      .enum(APPROVAL_OPS)
      .describe(
        "How the input's value is compared with `value`: eq, ne, gt, gte, lt, lte (numbers only), or in (`value` is a list).",
      ),
    value: z
      .unknown()
      .describe(
        "What the input's value is compared with: any JSON value; a number for gt/gte/lt/lte, a list for in.",
      ),
  })
  .superRefine((rule, ctx) => {
    if (!("value" in rule)) {
      ctx.addIssue({ code: "custom", path: ["value"], message: "required" });
    } else if (rule.op === "in" && !Array.isArray(rule.value)) {
      ctx.addIssue({ code: "custom", path: ["value"], message: "must be a list for op 'in'" });
    } else if (NUMERIC_APPROVAL_OPS.includes(rule.op) && typeof rule.value !== "number") {
      ctx.addIssue({ code: "custom", path: ["value"], message: `must be a number for op '${rule.op}'` });
    }
  });

const approvalPolicySchema = z
  .strictObject({
    when: z
      .array(approvalRuleSchema.describe("One rule: the input's value at `pointer`, compared with `value`."))
      .min(1)
      .max(MAX_APPROVAL_RULES)
      .optional()
      .describe("Approval is needed when any rule matches the model's input; without `when`, on every call."),
    by: z
      .enum(APPROVERS)
      .optional()
      .describe(
        "Who may decide: the thread's `user`, the `tenant`'s backend or team, or `any` of them (default).",
      ),
    timeoutMs: z
      .number()
      .int()
      .min(APPROVAL_TIMEOUT_MS.min)
      .max(APPROVAL_TIMEOUT_MS.max)
      .optional()
      .describe(
        "How long the approval waits for a decision, in ms: 10,000–604,800,000 (7 days), default 600,000.",
      ),
    onTimeout: z
      .enum(APPROVAL_TIMEOUT_OUTCOMES)
      .optional()
      .describe(
        "What an undecided approval becomes when it times out: `deny` (default) or `handoff` to a person.",
      ),
    title: z
      .string()
      .min(1)
      .max(120)
      .optional()
      .describe(
        "The approval card's title, shown to whoever decides beside the tool's name (at most 120 characters).",
      ),
    description: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe("The approval card's text: what approving does."),
  })
  .describe("Approval rules: when a call needs a decision, who decides, and how long it waits.");

export const toolApprovalSchema = z
  .union([z.enum(["never", "always"]).describe("`never` (the default) or `always`."), approvalPolicySchema], {
    error: "must be 'never', 'always' or an object of approval rules",
  })
  .describe(
    "Whether a call waits for a person's decision first: `never` (default), `always`, or rules on the input (docs/tools.md#approvals).",
  );

export const toolSchema = z
  .strictObject({
    name: z
      .string()
      .regex(TOOL_NAME_PATTERN)
      .describe("The tool's name as the model sees it: a letter, then up to 63 letters, digits, '_' or '-'."),
    description: z
      .string()
      .min(1)
      .max(2000)
      .describe("What the tool does and when to use it, for the model."),
    executor: z
      .enum(TOOL_EXECUTORS)
      .optional()
      .describe(
        "Where the tool runs: `server` (default), the webhook at `url`; or `client`, the page or app holding the thread (no `url`, no `signingSecret`).",
      ),
    // Public https hosts only (src/control/url-policy.ts), or local plain http, which publishing admits only in
    // development; the platform's own host is refused where it is known (routes/versions.ts).
    url: z
      .string()
      .superRefine((url, ctx) => {
        const problem = toolUrlProblem(url, { allowLocalHttp: true });
        if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional()
      .describe(
        "The tool's webhook: a public https URL the runtime POSTs each call to, signed. Required for a server tool; a client tool has none.",
      ),
    /** Alias of the tenant secret (`whsec_…`) that signs every call to this tool (server tools only). */
    signingSecret: secretAlias
      .optional()
      .describe(
        "Alias of the tenant secret (`whsec_…`) that signs every call with Standard Webhooks headers. Required for a server tool; a client tool has none.",
      ),
    inputSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("JSON Schema of the tool's arguments, as the model is shown it."),
    // Checked to be a JSON Schema when publishing (`publishIssues`), not here: stored versions are re-parsed on
    // every read.
    outputSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "JSON Schema (draft 2020-12) the tool's result must satisfy; a result that fails it reaches the model as an error.",
      ),
    /**
     * Where the runtime writes who is calling: JSON pointers into the input, each naming a runtime fact. Those
     * properties are hidden from the model and overwritten in its arguments (src/control/tool-identity.ts).
     */
    identity: z
      .record(z.string(), z.enum(IDENTITY_FACTS))
      .refine((identity) => Object.keys(identity).length <= MAX_IDENTITY_POINTERS, {
        message: `at most ${MAX_IDENTITY_POINTERS} pointers`,
      })
      .optional()
      .describe(
        "JSON pointers into the arguments, each set by the runtime to who is calling (hidden from the model).",
      ),
    timeoutMs: z
      .number()
      .int()
      .min(SERVER_TOOL_TIMEOUT_MS.min)
      .max(CLIENT_TOOL_TIMEOUT_MS.max)
      .optional()
      .describe(
        "How long a call may take before it counts as failed, in ms: a server tool 100–30,000 (default 10,000), a client tool 1,000–600,000 (default 60,000).",
      ),
    approval: toolApprovalSchema.optional(),
  })
  .superRefine((tool, ctx) => {
    // docs/tools.md#client-tools: a client tool is never sent to a webhook, so it names none.
    if (tool.executor === "client") {
      for (const key of ["url", "signingSecret"] as const) {
        if (tool[key] !== undefined) {
          ctx.addIssue({ code: "custom", path: [key], message: "not allowed for a client tool" });
        }
      }
      if (tool.timeoutMs !== undefined && tool.timeoutMs < CLIENT_TOOL_TIMEOUT_MS.min) {
        ctx.addIssue({
          code: "custom",
          path: ["timeoutMs"],
          message: `must be at least ${CLIENT_TOOL_TIMEOUT_MS.min} for a client tool`,
        });
      }
    } else {
      for (const key of ["url", "signingSecret"] as const) {
        if (tool[key] === undefined) {
          ctx.addIssue({ code: "custom", path: [key], message: "required for a server tool" });
        }
      }
      if (tool.timeoutMs !== undefined && tool.timeoutMs > SERVER_TOOL_TIMEOUT_MS.max) {
        ctx.addIssue({
          code: "custom",
          path: ["timeoutMs"],
          message: `must be at most ${SERVER_TOOL_TIMEOUT_MS.max} for a server tool`,
        });
      }
    }
    if (tool.identity === undefined) return;
    for (const problem of identityProblems(tool.identity, tool.inputSchema)) {
      ctx.addIssue({ code: "custom", path: ["identity", problem.pointer], message: problem.message });
    }
  });

/** One tool of an artifact (src/tools/tool-definitions.ts names it `Tool`). */
export type ArtifactTool = z.infer<typeof toolSchema>;
