// A run's wiring: the tenant secrets it uses, stores redacting them, its model, and the tool and usage callbacks.
import { decryptTenantSecret } from "../../auth/secret-box";
import { expandContext } from "../../control/context-template";
import { approvalFor, clientToolTimeoutMs, toolExecutor } from "../../control/tool-approval";
import { toolPermitted } from "../../control/tool-policy";
import { localHttpAllowed, platformHosts as platformHostsFor } from "../../control/url-policy";
import { ok, type Result } from "../../errors";
import { resolveModel } from "../../models/resolve-model";
import { type RunTurnInput, type ToolCallOutcome, type ToolCallRequest, WAIT } from "../../models/turn";
import type { JsonValue } from "../../storage/redact";
import { redactText } from "../../storage/redact";
import { readContextVersion, readThreadContext } from "../../storage/thread/context-store";
import { writeHandoffRequest } from "../../storage/thread/handoff-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { recordThreadEvent } from "../../storage/thread/thread-events";
import { executeToolCall, withRuntimeIdentity } from "../../tools/execute-tool";
import { modelTools } from "../../tools/model-tools";
import {
  HANDOFF_REQUESTED_OUTPUT,
  handoffEnabled,
  handoffReason,
  REQUEST_HANDOFF_TOOL,
} from "../../tools/request-handoff";
import { type Tool, toolNamed } from "../../tools/tool-definitions";
import { webhookSecretRedactions } from "../../tools/webhook-signature";
import type { StreamReceivers } from "./live-run";
import { requestApproval, requestClientTool } from "./run-actions";
import { openRunStores, type RunStores } from "./run-stores";

/** The error result a call to a tool outside the thread's policy gets (docs/tools.md#tool-policy). */
export const TOOL_NOT_PERMITTED = "This tool is not available in this conversation.";

/** The error result of a call an eval case has no mock for (docs/evals.md): the case fails, no webhook goes out. */
export const EVAL_TOOL_NOT_MOCKED = "This tool has no mock in the eval case.";

export interface WiringDeps {
  storage: DurableObjectStorage;
  env: Env;
  binding: ThreadBinding;
  now: () => number;
  /** Outbound fetch for tool webhooks (tests pass a fake). */
  fetch?: typeof fetch;
  /** Who hears the run's approval and client tool requests. */
  receivers: StreamReceivers;
}

export interface RunWiring {
  /** The stores the run writes through: redacting ones when it resolved any secret, else the ones it was given. */
  stores: RunStores;
  /** The artifact's instructions with the thread's context variables filled in (docs/protocol.md). */
  instructions: string;
  /** The version of the thread's context those variables came from (0: none), for the run's audit record. */
  contextVersion: number;
  /** The model and the tool and usage callbacks runTurn takes, or why the model could not be resolved. */
  turn: Result<Pick<RunTurnInput, "model" | "tools" | "onToolCall" | "onUsage">>;
  /** Runs an approved server tool, its delivery id the approval's (identical on any retry). */
  runApproved: (call: ToolCallRequest, approvalId: string, signal: AbortSignal) => Promise<ToolCallOutcome>;
}

/**
 * Wires one run. Every secret this run may use is resolved once; each value (in every spelling a tool might echo)
 * is redacted from everything the run stores and from what tools hand back to the model.
 */
export async function wireRun(
  deps: WiringDeps,
  run: {
    runId: string;
    userEntryId: string | null;
    subject: string | null;
    stores: RunStores;
    requestHost: string | null;
    /**
     * The context version the run started under, when it goes on after waiting for a person: its later model calls
     * see the variables and tools its first one did (docs/api.md#audit-record). Absent: the thread's context now.
     */
    contextVersion?: number;
    /** The run asked a person something (an approval or a client tool's answer). */
    onAsked?: () => void;
  },
): Promise<RunWiring> {
  const { binding, env, storage, now } = deps;
  const tools = binding.artifact.tools ?? [];
  const aliases = new Set([
    ...tools.flatMap((tool) => (tool.signingSecret !== undefined ? [tool.signingSecret] : [])),
    ...(binding.artifact.model.apiKeySecret !== undefined ? [binding.artifact.model.apiKeySecret] : []),
  ]);
  const secretByAlias = new Map<string, string | null>();
  for (const alias of aliases) {
    secretByAlias.set(alias, await decryptTenantSecret(env, binding.tenantId, alias).catch(() => null));
  }
  const secrets = [...secretByAlias.values()].flatMap((value) =>
    value ? [value, ...webhookSecretRedactions(value)] : [],
  );
  const stores = secrets.length > 0 ? openRunStores(storage, { now, secrets }) : run.stores;
  // Read once per run, so its prompt, its tools and every tool call see the same variables and tool policy; a run
  // going on after a wait keeps the version it started under, while a policy adopted since can still refuse a call.
  const current = readThreadContext(storage);
  const started = run.contextVersion === undefined ? null : readContextVersion(storage, run.contextVersion);
  const contextVersion = started === null ? current.version : (run.contextVersion ?? current.version);
  const { variables, toolPolicy } = started ?? { ...current, toolPolicy: current.toolPolicy ?? null };
  const currentPolicy = current.toolPolicy ?? null;
  const permittedNow = (name: string) =>
    toolPermitted(toolPolicy, name) && toolPermitted(currentPolicy, name);
  const instructions = expandContext(binding.artifact.instructions, variables);
  // The configured hosts and the one the turn's request came in on: neither a tool nor the model may call them.
  const platformHosts = platformHostsFor(env, run.requestHost);
  const model = await resolveModel(binding.artifact.model, {
    env,
    tenantSecret: async (alias) => secretByAlias.get(alias) ?? null,
    platformHosts,
  });
  if (!model.ok) {
    const unavailable = async (): Promise<ToolCallOutcome> => ({
      output: { error: "The model is not available." },
      isError: true,
    });
    return { stores, instructions, contextVersion, turn: model, runApproved: unavailable };
  }

  const callContext = {
    tenantId: binding.tenantId,
    agentId: binding.agentId,
    threadId: binding.threadId,
    subject: run.subject,
    runId: run.runId,
    variables,
  };
  const handoffTool = handoffEnabled(binding.artifact);
  const onToolCall: RunTurnInput["onToolCall"] = async (call, signal) => {
    if (handoffTool && call.toolName === REQUEST_HANDOFF_TOOL) {
      // Stored outside the run's redacting stores, so redacted here: a model may echo a secret it saw.
      const given = handoffReason(call.input);
      const reason = given === undefined ? undefined : redactText(given, secrets);
      const recorded = stores.toolCalls.record({ runId: run.runId, name: call.toolName, input: call.input });
      recordHandoffRequest(storage, {
        binding,
        runId: run.runId,
        ...(reason !== undefined ? { reason } : {}),
        now: now(),
      });
      if (recorded.ok)
        stores.toolCalls.complete(recorded.value.id, {
          status: "finished",
          output: HANDOFF_REQUESTED_OUTPUT,
        });
      return { output: HANDOFF_REQUESTED_OUTPUT };
    }
    // An eval case's thread answers every call from its mocks: no webhook, client or person (docs/evals.md).
    const mocks = binding.preview?.toolMocks;
    if (mocks !== undefined) return mocked(call, mocks);
    // A tool the thread's policy hides is refused here, whatever the model was shown: no webhook goes out
    // (docs/tools.md#tool-policy).
    const permitted = permittedNow(call.toolName);
    const tool = permitted ? toolNamed(tools, call.toolName) : null;
    if (tool !== null) {
      // What a person approves is what the tool will receive: the input with the caller's identity written in.
      const input = withRuntimeIdentity(
        tool,
        isObject(call.input) ? call.input : {},
        callContext,
      ) as JsonValue;
      const asked = { toolCallId: call.toolCallId, name: tool.name, input };
      const actionDeps = { storage, stores, receivers: deps.receivers, binding, now };
      const runRef = { id: run.runId, userEntryId: run.userEntryId };
      const need = approvalFor(tool, input);
      if (need !== null) {
        run.onAsked?.();
        await requestApproval(actionDeps, runRef, asked, need);
        return WAIT;
      }
      if (toolExecutor(tool) === "client") {
        run.onAsked?.();
        await requestClientTool(actionDeps, runRef, asked, clientToolTimeoutMs(tool));
        return WAIT;
      }
    }
    return execute(call, signal, permitted ? tool : null, permitted);
  };

  const mocked = (call: ToolCallRequest, mocks: Record<string, JsonValue>): ToolCallOutcome => {
    const recorded = stores.toolCalls.record({ runId: run.runId, name: call.toolName, input: call.input });
    const mock = Object.hasOwn(mocks, call.toolName) ? mocks[call.toolName] : undefined;
    const result =
      mock === undefined
        ? { output: { error: EVAL_TOOL_NOT_MOCKED }, isError: true, status: "blocked" as const }
        : { output: mock, status: "finished" as const };
    if (recorded.ok) {
      stores.toolCalls.complete(recorded.value.id, { status: result.status, output: result.output });
    }
    return { output: result.output, ...(result.isError ? { isError: true } : {}) };
  };

  const execute = async (
    call: ToolCallRequest,
    signal: AbortSignal,
    tool: Tool | null,
    permitted: boolean,
    webhookId?: string,
  ): Promise<ToolCallOutcome> => {
    const recorded = stores.toolCalls.record({ runId: run.runId, name: call.toolName, input: call.input });
    const signingSecret =
      tool === null || tool.signingSecret === undefined
        ? null
        : (secretByAlias.get(tool.signingSecret) ?? null);
    const result =
      tool === null || signingSecret === null || toolExecutor(tool) === "client"
        ? {
            output: {
              error: !permitted
                ? TOOL_NOT_PERMITTED
                : tool === null
                  ? "Unknown tool."
                  : toolExecutor(tool) === "client"
                    ? "The tool runs in the client."
                    : "The tool's signing secret is not configured.",
            },
            isError: true,
            status: "blocked" as const,
          }
        : await executeToolCall({
            tool,
            call,
            signingSecret,
            fetch: deps.fetch ?? fetch,
            now,
            signal,
            platformHosts,
            allowLocalHttp: localHttpAllowed(env.ENVIRONMENT),
            secrets,
            context: callContext,
            ...(webhookId !== undefined ? { webhookId } : {}),
          });
    if (recorded.ok) {
      stores.toolCalls.complete(recorded.value.id, { status: result.status, output: result.output });
    }
    return { output: result.output, ...(result.isError ? { isError: true } : {}) };
  };

  const runApproved: RunWiring["runApproved"] = (call, approvalId, signal) => {
    const permitted = permittedNow(call.toolName);
    const tool = permitted ? toolNamed(tools, call.toolName) : null;
    return execute(call, signal, tool, permitted, approvalId);
  };

  const onUsage: RunTurnInput["onUsage"] = (usage) => {
    stores.usage.record(run.runId, usage.step, {
      provider: binding.artifact.model.provider,
      model: binding.artifact.model.model,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
    });
  };

  const sent = modelTools(binding.artifact, toolPolicy);
  return {
    stores,
    instructions,
    contextVersion,
    turn: ok({
      model: model.value,
      ...(sent.length > 0 ? { tools: sent } : {}),
      onToolCall,
      onUsage,
    }),
    runApproved,
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Called by the run's `request_handoff` tool: records the request and its `handoff.requested` event in one
 * transaction; the handoff itself starts when the run has ended (`Handoff.applyRequested`).
 */
export function recordHandoffRequest(
  storage: DurableObjectStorage,
  input: { binding: ThreadBinding; runId: string; reason?: string; now: number },
): void {
  storage.transactionSync(() => {
    writeHandoffRequest(storage, {
      runId: input.runId,
      ...(input.reason !== undefined ? { reason: input.reason } : {}),
    });
    recordThreadEvent(
      storage,
      {
        type: "handoff.requested",
        data: {
          threadId: input.binding.threadId,
          agentId: input.binding.agentId,
          version: input.binding.version,
          runId: input.runId,
          ...(input.reason !== undefined ? { reason: input.reason } : {}),
        },
      },
      input.now,
    );
  });
}
