// One agent tool call as a signed outbound webhook: URL policy, runtime identity, time and size caps, one retry.
import type { JSONValue } from "@ai-sdk/provider";
import { CanonicalJsonError, canonicalJson, sha256Hex } from "../control/canonical-json";
import type { ContextVariables } from "../control/context-variables";
import { identityKind } from "../control/tool-identity";
import { toolUrlProblem } from "../control/url-policy";
import { createRedactor } from "../storage/redact";
import { identitySlots, type Tool } from "./tool-definitions";
import { signWebhook, webhookSecretRedactions, webhookSigningKey } from "./webhook-signature";

export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;
export const MAX_TOOL_RESPONSE_BYTES = 64 * 1024;
export const MAX_TOOL_REQUEST_BYTES = 256 * 1024;
/** Deeper response JSON is handed to the model as text (the stored copy caps depth anyway). */
const MAX_RESPONSE_DEPTH = 64;
const USER_AGENT = "agent-threads-tools/1";

/** Who is calling, from verified claims and the runtime: never from the model. */
export interface ToolCallContext {
  tenantId: string;
  agentId: string;
  threadId: string;
  /** The end user (`sub`), or `null` for an anonymous visitor. */
  subject: string | null;
  runId: string;
  /** The thread's context variables from its latest private launch (docs/protocol.md); sent as `{}` when there are none. */
  variables?: ContextVariables;
}

export interface ExecuteToolCallInput {
  tool: Tool;
  call: { toolCallId: string; toolName: string; input: unknown };
  context: ToolCallContext;
  /** The decrypted `whsec_…` value behind `tool.signingSecret`. */
  signingSecret: string;
  fetch: typeof fetch;
  /** Milliseconds; the webhook timestamp is taken from it. */
  now: () => number;
  /** The turn's signal: cancelling the turn cancels the call. */
  signal?: AbortSignal;
  /** The Worker's own hosts, refused as tool destinations. */
  platformHosts?: readonly string[];
  /** This deployment admits local plain-http tools (`localHttpAllowed`: development only). */
  allowLocalHttp?: boolean;
  /** The delivery id every attempt carries; by default one per (run, tool call). An approved call's is its approvalId. */
  webhookId?: string;
  /** Secret values scrubbed from the output before the model (or storage) sees it; the signing secret always is. */
  secrets?: readonly string[];
}

export type ToolCallStatus = "finished" | "error" | "blocked";

export interface ToolCallResult {
  output: JSONValue;
  isError?: boolean;
  status: ToolCallStatus;
  /** The HTTP status of the last response, when one arrived. */
  httpStatus?: number;
  /** Requests sent: 0 when the call was refused before any, 2 after a retry. */
  attempts: number;
  /** The `webhook-id` every attempt carried. */
  webhookId?: string;
}

/**
 * One delivery id per (run, model tool call): a retry reuses it, so the tool can deduplicate. The model's call id
 * alone is not unique (providers and the local model repeat ids across turns), so the run id is part of it.
 */
export async function webhookIdFor(runId: string, toolCallId: string): Promise<string> {
  return `msg_${(await sha256Hex(canonicalJson([runId, toolCallId]))).slice(0, 32)}`;
}

type Outcome = Omit<ToolCallResult, "attempts" | "webhookId">;

const refused = (status: "error" | "blocked", message: string): Outcome => ({
  output: { error: message },
  isError: true,
  status,
});

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  // defineProperty, not assignment: a `__proto__` argument stays a plain key.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A copy of a plain object, own keys only (`__proto__` included, as a plain key). */
function copyOf(source: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) define(out, key, value);
  return out;
}

/** `target` with `value` at `path`; whatever stands in the way and is not an object becomes one. */
function withValueAt(
  target: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
): Record<string, unknown> {
  const [head, ...rest] = path;
  if (head === undefined) return target;
  const out = copyOf(target);
  if (rest.length === 0) {
    define(out, head, value);
    return out;
  }
  const child = Object.hasOwn(target, head) ? target[head] : undefined;
  define(out, head, withValueAt(isPlainObject(child) ? child : {}, rest, value));
  return out;
}

/**
 * The arguments actually sent: the model's, with every top-level identity-like key it wrote set from the runtime
 * context, then every identity slot of the tool (declared pointers at any depth, and top-level identity keys its
 * schema declares) written over whatever the model put there.
 */
export function withRuntimeIdentity(
  tool: Tool,
  input: Record<string, unknown>,
  context: ToolCallContext,
): Record<string, unknown> {
  let out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const kind = identityKind(key);
    define(out, key, kind === null ? value : context[kind]);
  }
  for (const slot of identitySlots(tool)) out = withValueAt(out, slot.path, context[slot.fact]);
  return out;
}

/** A parsed JSON value rebuilt as a JSONValue; `undefined` when nested deeper than the cap. */
function jsonValue(value: unknown, depth: number): JSONValue | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (depth >= MAX_RESPONSE_DEPTH || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    const items: JSONValue[] = [];
    for (const item of value) {
      const v = jsonValue(item, depth + 1);
      if (v === undefined) return undefined;
      items.push(v);
    }
    return items;
  }
  const out: { [key: string]: JSONValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const v = jsonValue(item, depth + 1);
    if (v === undefined) return undefined;
    define(out, key, v);
  }
  return out;
}

function parseOutput(text: string, contentType: string | null): JSONValue {
  if (text.trim() === "") return null;
  if (contentType === null || /\bjson\b/i.test(contentType)) {
    try {
      return jsonValue(JSON.parse(text), 0) ?? text;
    } catch {
      // Not JSON after all: the model gets the text.
    }
  }
  return text;
}

/** Settles with the promise, or rejects as soon as the signal aborts (a fetch or read that ignores it still ends). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Nobody awaits `promise` any more; a later rejection of it must not surface as unhandled.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

type Body = { ok: true; text: string } | { ok: false };

/** Reads at most `MAX_TOOL_RESPONSE_BYTES`; one byte more and the rest is cancelled, unread. */
async function readCapped(response: Response, signal: AbortSignal): Promise<Body> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > MAX_TOOL_RESPONSE_BYTES) {
    response.body?.cancel().catch(() => {});
    return { ok: false };
  }
  if (response.body === null) return { ok: true, text: "" };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await untilAborted(reader.read(), signal);
      if (done) break;
      total += value.byteLength;
      if (total > MAX_TOOL_RESPONSE_BYTES) {
        reader.cancel().catch(() => {});
        return { ok: false };
      }
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, text: new TextDecoder().decode(bytes) };
}

const isRedirect = (response: Response) => response.status >= 300 && response.status < 400;

/**
 * Calls one tool. Never throws for anything a tool, the network or the model can do: every failure is an outcome
 * the model reads (`isError`) and the runtime records (`status`).
 */
export async function executeToolCall(input: ExecuteToolCallInput): Promise<ToolCallResult> {
  const redactor = createRedactor([
    ...webhookSecretRedactions(input.signingSecret),
    ...(input.secrets ?? []),
  ]);
  let attempts = 0;
  let webhookId: string | undefined;
  const finish = (outcome: Outcome): ToolCallResult => ({
    ...outcome,
    output: redactor.value(outcome.output),
    attempts,
    ...(webhookId !== undefined ? { webhookId } : {}),
  });

  const { tool, call, context } = input;
  if (call.toolName !== tool.name)
    return finish(refused("blocked", `The agent has no tool '${call.toolName}'.`));
  // A client tool is answered by the page or app holding the thread, never sent anywhere from here
  // (docs/tools.md#client-tools).
  const url = tool.executor === "client" ? undefined : tool.url;
  if (url === undefined) return finish(refused("blocked", "The tool runs in the client, not at a webhook."));
  const problem = toolUrlProblem(url, {
    platformHosts: input.platformHosts ?? [],
    allowLocalHttp: input.allowLocalHttp === true,
  });
  if (problem !== null) return finish(refused("blocked", `The tool's URL ${problem}.`));
  if (webhookSigningKey(input.signingSecret) === null) {
    return finish(refused("error", "The tool's signing secret is not a Standard Webhooks secret (whsec_…)."));
  }
  const args = call.input === undefined ? {} : call.input;
  if (!isPlainObject(args)) return finish(refused("error", "The tool input must be a JSON object."));

  // The request body, canonical JSON: `{tool, toolCallId, input, context: {tenantId, agentId, threadId, subject,
  // runId, variables}}`, identity and variables from the runtime only.
  let body: string;
  try {
    body = canonicalJson({
      tool: tool.name,
      toolCallId: call.toolCallId,
      input: withRuntimeIdentity(tool, args, context),
      context: { ...context, variables: context.variables ?? {} },
    });
  } catch (error) {
    if (error instanceof CanonicalJsonError)
      return finish(refused("error", "The tool input is not valid JSON."));
    throw error;
  }
  if (new TextEncoder().encode(body).byteLength > MAX_TOOL_REQUEST_BYTES) {
    return finish(refused("error", "The tool input is too large."));
  }
  webhookId = input.webhookId ?? (await webhookIdFor(context.runId, call.toolCallId));

  // Called as a plain function: workerd refuses the global fetch invoked as a method of another object.
  const send = input.fetch;
  const timeoutMs = tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  // A timer of our own, cleared when the call ends: `AbortSignal.timeout` would keep the object busy until it fires.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new DOMException("timed out", "TimeoutError")), timeoutMs);
  const signal = input.signal ? AbortSignal.any([input.signal, timeout.signal]) : timeout.signal;
  const stopped = (): Outcome =>
    input.signal?.aborted
      ? refused("error", "The tool call was cancelled.")
      : refused("error", `The tool did not answer within ${timeoutMs} ms.`);

  try {
    // One retry, for a network failure or a 5xx, inside the same time cap and with the same id and body.
    for (;;) {
      if (signal.aborted) return finish(stopped());
      attempts += 1;
      const canRetry = attempts < 2;
      const headers = await signWebhook({
        secret: input.signingSecret,
        id: webhookId,
        timestamp: Math.floor(input.now() / 1000),
        body,
      });
      let response: Response;
      try {
        response = await untilAborted(
          send(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/plain;q=0.9",
              "user-agent": USER_AGENT,
              ...headers,
            },
            body,
            redirect: "manual",
            signal,
          }),
          signal,
        );
      } catch {
        if (signal.aborted) return finish(stopped());
        if (canRetry) continue;
        return finish(refused("error", "The tool could not be reached."));
      }

      if (isRedirect(response)) {
        response.body?.cancel().catch(() => {});
        // Redirects are never followed: the next hop was not checked against the URL policy, and the signed body
        // would be replayed to it.
        return finish({
          ...refused("error", "The tool answered with a redirect, which is not followed."),
          httpStatus: response.status,
        });
      }
      if (response.status >= 500 && canRetry) {
        response.body?.cancel().catch(() => {});
        continue;
      }

      let read: Body;
      try {
        read = await readCapped(response, signal);
      } catch {
        const cut = signal.aborted ? stopped() : refused("error", "The tool's response was cut off.");
        return finish({ ...cut, httpStatus: response.status });
      }
      if (!read.ok) {
        return finish({
          ...refused("error", `The tool's response was too large (over ${MAX_TOOL_RESPONSE_BYTES} bytes).`),
          httpStatus: response.status,
        });
      }
      const output = parseOutput(read.text, response.headers.get("content-type"));
      if (response.ok) return finish({ output, status: "finished", httpStatus: response.status });
      return finish({
        output: { error: `The tool answered HTTP ${response.status}.`, response: output },
        isError: true,
        status: "error",
        httpStatus: response.status,
      });
    }
  } finally {
    clearTimeout(timer);
  }
}
