// A private launch's context variables become its thread's (docs/protocol.md): the registry row holds them, a live object is told.

import { type ContextVariables, contextText } from "../../control/context-variables";
import { replaceThreadContext, type ThreadRecord } from "../../storage/d1/thread-registry";
import { rowAddress, threadStubFor } from "../../thread/contract";

/**
 * The context version a launch of the existing `thread` hands out in its token. `variables` is the private launch's
 * context (null: it carried none, which clears the thread's) or undefined for a public launch, which leaves it as
 * it is. An unchanged context costs nothing; a change is one D1 write and one call to the thread object, awaited,
 * so a socket opened before this launch uses the new context from its next turn. If that call fails the object
 * still catches up from D1 on the first request carrying this launch's token.
 */
/** What a relaunch needs of the thread it resumes: its address and the context it holds. */
export type ResumedThread = Pick<
  ThreadRecord,
  "tenantId" | "id" | "agentId" | "environment" | "context" | "contextVersion"
>;

export async function relaunchContext(
  env: Env,
  thread: ResumedThread,
  variables: ContextVariables | null | undefined,
): Promise<number> {
  if (variables === undefined) return thread.contextVersion;
  const text = contextText(variables);
  if (text === thread.context) return thread.contextVersion;
  const version = await replaceThreadContext(env.DB, thread.tenantId, thread.id, text);
  if (version === null) return thread.contextVersion;
  const stub = await threadStubFor(env, thread);
  const delivered = await stub
    .adoptLaunchContext(rowAddress(thread), { version, variables: variables ?? {} })
    .catch((error: unknown) => ({ ok: false as const, code: "internal", message: String(error) }));
  if (!delivered.ok) {
    console.error(
      JSON.stringify({ level: "error", message: "context delivery failed", code: delivered.code }),
    );
  }
  return version;
}
