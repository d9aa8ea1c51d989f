// A private launch's context variables and tool policy become its thread's (docs/protocol.md, docs/tools.md#tool-policy):
// the registry row holds them, a live object is told.

import { type ContextVariables, contextText } from "../../control/context-variables";
import { normalToolPolicy, type ToolPolicy, toolPolicyText } from "../../control/tool-policy";
import { replaceThreadContext, type ThreadRecord } from "../../storage/d1/thread-registry";
import { rowAddress, threadStubFor } from "../../thread/contract";

/** What a relaunch needs of the thread it resumes: its address and the context and tool policy it holds. */
export type ResumedThread = Pick<
  ThreadRecord,
  "tenantId" | "id" | "agentId" | "environment" | "context" | "toolPolicy" | "contextVersion"
>;

/** A private launch's context and tool policy; null for either is none, which clears the thread's. */
export interface LaunchContext {
  variables: ContextVariables | null;
  toolPolicy: ToolPolicy | null;
}

/**
 * The context version a launch of the existing `thread` hands out in its token. `next` is the private launch's
 * context and tool policy, or undefined for a public launch, which leaves both as they are. Both are one version:
 * a change of either is one D1 write and one call to the thread object, awaited, so a socket opened before this
 * launch uses the new ones from its next turn; unchanged, they cost nothing. If that call fails the object still
 * catches up from D1 on the first request carrying this launch's token.
 */
export async function relaunchContext(
  env: Env,
  thread: ResumedThread,
  next: LaunchContext | undefined,
): Promise<number> {
  if (next === undefined) return thread.contextVersion;
  const text = contextText(next.variables);
  const policyText = toolPolicyText(next.toolPolicy);
  if (text === thread.context && policyText === thread.toolPolicy) return thread.contextVersion;
  const version = await replaceThreadContext(env.DB, thread.tenantId, thread.id, {
    context: text,
    toolPolicy: policyText,
  });
  if (version === null) return thread.contextVersion;
  const stub = await threadStubFor(env, thread);
  const toolPolicy = normalToolPolicy(next.toolPolicy);
  const delivered = await stub
    .adoptLaunchContext(rowAddress(thread), {
      version,
      variables: next.variables ?? {},
      ...(toolPolicy !== null ? { toolPolicy } : {}),
    })
    .catch((error: unknown) => ({ ok: false as const, code: "internal", message: String(error) }));
  if (!delivered.ok) {
    console.error(
      JSON.stringify({ level: "error", message: "context delivery failed", code: delivered.code }),
    );
  }
  return version;
}
