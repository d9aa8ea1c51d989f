// Launching a thread (docs/api.md): a public agent as a browser would (its page's Origin), or a private one from the
// tenant's backend for a signed-in user, with that user's context variables.
import type { LaunchResponse } from "../shared/launch-api";
import { type ClientOptions, Transport } from "./http";

export type { LaunchResponse } from "../shared/launch-api";

/** A thread's context variables (docs/protocol.md): up to 32 keys, values a string, number or boolean. */
export type ContextVariables = Record<string, string | number | boolean>;

/** A private launch's tool policy (docs/tools.md#tool-policy): up to 64 tool names in each list. */
export interface ToolPolicy {
  allow?: string[];
  deny?: string[];
}

export interface PublicLaunchRequest {
  /** The agent's `pk_…`. */
  agentKey: string;
  /** Resume one of this visitor's threads (needs `visitorToken`). */
  threadId?: string;
  /** The `visitorToken` an earlier launch answered: the same anonymous visitor. */
  visitorToken?: string;
}

export interface PublicLaunchOptions extends ClientOptions, PublicLaunchRequest {
  /**
   * The page origin the launch speaks for; it must be one of the agent's allowed origins. A browser sends its own
   * `Origin` and ignores this; from Node it is required, since nothing else sends one.
   */
  origin?: string;
}

/** Exactly one of `agentId` or `agentKey` names the agent. */
export type PrivateLaunchRequest = (
  | { agentId: string; agentKey?: never }
  | { agentKey: string; agentId?: never }
) & {
  /** The tenant's own id for the signed-in user; resuming a thread requires the same subject. */
  subject: string;
  threadId?: string;
  /** Replaces the thread's context variables (leaving it out clears them). */
  context?: ContextVariables;
  /**
   * Which of the agent's tools this thread's model sees and may call (docs/tools.md#tool-policy): only those in
   * `allow` (if given), none in `deny`. Replaces the thread's policy (leaving it out lifts it).
   */
  toolPolicy?: ToolPolicy;
};

export type PrivateLaunchOptions = ClientOptions & PrivateLaunchRequest & { apiKey: string };

/** `POST /v1/agent-sessions` with a public agent key. */
export function launchPublic(options: PublicLaunchOptions): Promise<LaunchResponse> {
  const { agentKey, threadId, visitorToken, origin, ...client } = options;
  const body = {
    agentKey,
    ...(threadId !== undefined ? { threadId } : {}),
    ...(visitorToken !== undefined ? { visitorToken } : {}),
  };
  return new Transport(client).json("POST", "/v1/agent-sessions", {
    body,
    ...(origin !== undefined ? { headers: { Origin: origin } } : {}),
  });
}

/** `POST /v1/agent-sessions` from the tenant's backend (`sk_…`) for one of its users. */
export function launchPrivate(options: PrivateLaunchOptions): Promise<LaunchResponse>;
/** The same through a transport that already carries the credential (the admin client's). */
export function launchPrivate(transport: Transport, request: PrivateLaunchRequest): Promise<LaunchResponse>;
export function launchPrivate(
  first: PrivateLaunchOptions | Transport,
  request?: PrivateLaunchRequest,
): Promise<LaunchResponse> {
  let transport: Transport;
  let launch: PrivateLaunchRequest;
  if (first instanceof Transport) {
    transport = first;
    launch = request!;
  } else {
    const { apiKey, ...rest } = first;
    const { agentId, agentKey, subject, threadId, context, toolPolicy, ...client } = rest;
    transport = new Transport(client, apiKey);
    launch = { agentId, agentKey, subject, threadId, context, toolPolicy } as PrivateLaunchRequest;
  }
  const { agentId, agentKey, subject, threadId, context, toolPolicy } = launch;
  const body = {
    ...(agentId !== undefined ? { agentId } : { agentKey }),
    subject,
    ...(threadId !== undefined ? { threadId } : {}),
    ...(context !== undefined ? { context } : {}),
    ...(toolPolicy !== undefined ? { toolPolicy } : {}),
  };
  return transport.json("POST", "/v1/agent-sessions", { body });
}
