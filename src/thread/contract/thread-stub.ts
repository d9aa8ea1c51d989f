// The thread object for verified values: named from tenant, environment, agent and thread, never from a client.
import type { ThreadRecord } from "../../storage/d1/thread-registry";
import type { ThreadAddress } from "./claims";
import { threadObjectName } from "./object-name";
import type { ThreadObject } from "./thread-object";

/** The only way to the thread object: callers see its contract (`ThreadObject`), not its class. */
export async function threadStub(env: Env, address: ThreadAddress): Promise<DurableObjectStub<ThreadObject>> {
  const name = await threadObjectName(env.DO_NAME_KEY, address);
  return env.THREAD.get(env.THREAD.idFromName(name));
}

/** The address of a server-side registry row, as the thread object's RPC methods take it. */
export function rowAddress(
  thread: Pick<ThreadRecord, "tenantId" | "environment" | "agentId" | "id">,
): ThreadAddress {
  return {
    tenantId: thread.tenantId,
    environment: thread.environment,
    agentId: thread.agentId,
    threadId: thread.id,
  };
}

export function threadStubFor(
  env: Env,
  thread: Pick<ThreadRecord, "tenantId" | "environment" | "agentId" | "id">,
): Promise<DurableObjectStub<ThreadObject>> {
  return threadStub(env, rowAddress(thread));
}
