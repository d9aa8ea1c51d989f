// The thread object for a server-side registry row: named from the row's tenant, agent and environment, never a client's.
import type { ThreadRecord } from "../storage/d1/thread-registry";
import { threadObjectName } from "./do-name";

export async function threadStubFor(
  env: Env,
  thread: Pick<ThreadRecord, "tenantId" | "environment" | "agentId" | "id">,
) {
  const name = await threadObjectName(env.DO_NAME_KEY, {
    tenantId: thread.tenantId,
    environment: thread.environment,
    agentEntityId: thread.agentId,
    threadId: thread.id,
  });
  return env.THREAD.get(env.THREAD.idFromName(name));
}
