// A launch (docs/protocol.md): a public agent key (browser) or a tenant's backend + subject becomes a launch token for a
// new or resumed thread — the agent, its origins and release, the limits and quota, the thread's owner, context and
// tool policy.
import { enforceSubjectLaunchLimit } from "../../auth/abuse-limits";
import { GATE_UNAVAILABLE, gateAgentCached } from "../../auth/gate-agent-cache";
import { signLaunchToken } from "../../auth/launch-token";
import { ownerProof } from "../../auth/owner-proof";
import { admitNewLaunch, enforceLaunchRateLimit, refundLaunchQuota } from "../../auth/rate-limit";
import { newThreadId } from "../../auth/thread-ids";
import { visitorHash } from "../../auth/visitor-revocation";
import { newVisitorId, signVisitorToken, verifyVisitorToken } from "../../auth/visitor-token";
import { type ContextVariables, contextText } from "../../control/context-variables";
import type { AgentEntity, Environment } from "../../control/deployment-store";
import { type ToolPolicy, toolPolicyText } from "../../control/tool-policy";
import { AppError, databaseUnavailable, fromDatabase } from "../../errors";
import { deploymentStoreOf } from "../../http/store";
import { originAllowed } from "../../shared/origin-policy";
import type { Presentation } from "../../shared/presentation";
import { visitorRevoked } from "../../storage/d1/erasures";
import { insertThread } from "../../storage/d1/thread-registry";
import { threadStub } from "../../thread/contract";
import { findLaunchAgentByIdCached, findLaunchAgentCached } from "./agent-key-cache";
import { type LaunchContext, type ResumedThread, relaunchContext } from "./launch-context";
import { launchPresentation } from "./launch-presentation";

/** A browser's launch of a public agent, its body already parsed. */
export interface PublicLaunch {
  kind: "public";
  agentKey: string;
  threadId?: string;
  visitorToken?: string;
  /** The request's `Origin`, checked against the agent's allowed origins. */
  origin: string | undefined;
  /** The client's address, which the per-network launch limit counts. */
  clientIp: string;
}

/** A tenant backend's launch for one of its users, its `sk_` key already authenticated as an admin key. */
export interface PrivateLaunch {
  kind: "private";
  tenantId: string;
  /** The launching `sk_` key: its tokens name it, so revoking it stops them (docs/security.md). */
  apiKeyId: string;
  /** Exactly one of `agentKey` and `agentId`. */
  agentKey?: string;
  agentId?: string;
  subject: string;
  threadId?: string;
  context?: ContextVariables;
  /** Which of the agent's tools the thread's model sees and may call (docs/tools.md#tool-policy); absent: all. */
  toolPolicy?: ToolPolicy;
}

export type LaunchRequest = PublicLaunch | PrivateLaunch;

/** What a launch answers, besides where the thread is reached (the request's host decides that). */
export interface Launched {
  token: string;
  expiresAt: string;
  threadId: string;
  visitorToken?: string;
  presentation?: Presentation;
}

export interface LaunchHooks {
  /** Called once a public launch's `Origin` is allowed by its agent, before anything else may refuse it. */
  originVerified(origin: string | undefined): void;
}

const launchEnvironment = (env: Env): Environment => env.ENVIRONMENT as Environment;

/** One body for every unknown, disabled or rotated key, so the answer reveals nothing. */
const unknownAgent = () => new AppError("unauthenticated", "Unknown or inactive agent key.");

interface LaunchTarget {
  agent: AgentEntity;
  /** Whether the agent has an active release in this environment (read with the agent, no extra round trip). */
  released: boolean;
  subject: string;
  subjectKind: "visitor" | "user";
  threadId?: string;
  issueVisitorToken: boolean;
  origin?: string;
  /**
   * A private launch's context and tool policy (null for either: none, which clears the thread's); a public launch
   * leaves it undefined.
   */
  context?: LaunchContext;
  /** A private launch's `sk_` key: its tokens name it, so revoking it stops them (docs/security.md). */
  apiKeyId?: string;
}

async function resolvePublic(env: Env, body: PublicLaunch, hooks: LaunchHooks): Promise<LaunchTarget> {
  const { origin } = body;
  const found = await fromDatabase(
    findLaunchAgentCached(deploymentStoreOf(env), body.agentKey, launchEnvironment(env)),
  );
  const agent = found?.agent ?? null;
  if (found === null || agent === null || agent.status !== "active" || agent.visibility !== "public")
    throw unknownAgent();
  if (!originAllowed(origin, agent.allowedOrigins)) {
    throw new AppError("forbidden", "This origin may not launch this agent.");
  }
  hooks.originVerified(origin);
  let subject: string;
  let issueVisitorToken = false;
  if (body.visitorToken !== undefined) {
    const visitor = await verifyVisitorToken(env, body.visitorToken);
    if (!visitor.ok || visitor.claims.tenantId !== agent.tenantId || visitor.claims.agentId !== agent.id) {
      throw new AppError("unauthenticated", "The visitor token is not valid for this agent.");
    }
    // A visitor who erased their conversations (`DELETE /v1/me/threads`) is revoked: the widget starts afresh. Only a
    // new thread asks D1: a resume names a thread that erasure left a tombstone in, and its object refuses it.
    if (body.threadId === undefined) {
      const hash = await visitorHash(env, agent.tenantId, visitor.claims.sub);
      if (await visitorRevoked(env.DB, agent.tenantId, hash, new Date().toISOString())) {
        throw new AppError("unauthenticated", "The visitor token is not valid for this agent.");
      }
    }
    subject = visitor.claims.sub;
  } else {
    if (body.threadId !== undefined) {
      throw new AppError("unauthenticated", "Resuming a thread requires its visitor token.");
    }
    subject = newVisitorId();
    issueVisitorToken = true;
  }
  return {
    agent,
    released: found.released,
    subject,
    subjectKind: "visitor",
    issueVisitorToken,
    ...(body.threadId !== undefined ? { threadId: body.threadId } : {}),
    ...(origin !== undefined ? { origin } : {}),
  };
}

async function resolvePrivate(env: Env, body: PrivateLaunch): Promise<LaunchTarget> {
  const store = deploymentStoreOf(env);
  const found = await fromDatabase(
    body.agentKey !== undefined
      ? findLaunchAgentCached(store, body.agentKey, launchEnvironment(env))
      : findLaunchAgentByIdCached(store, body.tenantId, body.agentId!, launchEnvironment(env)),
  );
  const agent = found?.agent ?? null;
  if (found === null || agent === null || agent.tenantId !== body.tenantId || agent.status !== "active")
    throw unknownAgent();
  return {
    agent,
    released: found.released,
    subject: body.subject,
    subjectKind: "user",
    issueVisitorToken: false,
    ...(body.threadId !== undefined ? { threadId: body.threadId } : {}),
    context: { variables: body.context ?? null, toolPolicy: body.toolPolicy ?? null },
    apiKeyId: body.apiKeyId,
  };
}

/** Every refusal of a resume is the same answer: no existence oracle for another subject's or an erased thread. */
const threadNotFound = () => new AppError("not_found", "Thread not found.");

/**
 * A resume (`threadId` given): the thread object decides whether this subject owns it and whether it still exists;
 * the tenant's status comes from the gate cache. The answer carries the context the thread holds, for
 * `relaunchContext`.
 */
async function resumable(
  env: Env,
  target: LaunchTarget,
  threadId: string,
): Promise<ResumedThread & { versionId: string | null }> {
  const { agent } = target;
  const environment = launchEnvironment(env);
  const gate = await gateAgentCached(env.DB, agent.tenantId, agent.id);
  // A refresh takes no quota, so the quota object's status check is not on its way: the gate cache's is.
  if (gate !== GATE_UNAVAILABLE && gate !== null && gate.tenantStatus !== "active") {
    throw new AppError("forbidden", "This account is disabled.");
  }
  const address = { tenantId: agent.tenantId, environment, agentId: agent.id, threadId };
  const stub = await threadStub(env, address);
  let vouched: Awaited<ReturnType<typeof stub.vouchForLaunch>>;
  try {
    vouched = await stub.vouchForLaunch({ ...address, sub: target.subject, subjectKind: target.subjectKind });
  } catch (error) {
    throw new AppError("upstream_unavailable", "The thread is unavailable; try again.", { cause: error });
  }
  if (!vouched.ok) {
    if (vouched.code === "upstream_unavailable") throw databaseUnavailable();
    throw threadNotFound();
  }
  const held = vouched.value.context;
  return {
    tenantId: agent.tenantId,
    id: threadId,
    agentId: agent.id,
    environment,
    context: contextText(held.variables),
    toolPolicy: toolPolicyText(held.toolPolicy),
    contextVersion: held.version,
    versionId: vouched.value.versionId,
  };
}

/**
 * The launch token (with, for a new thread — `ownerProofIn` set to its environment — the proof of its owner: its object
 * records the owner from the first request carrying it and reads the context and tool policy from the registry row
 * then, docs/decisions.md "Launch latency") and, for a new visitor, the visitor token.
 */
async function signTokens(
  env: Env,
  target: LaunchTarget,
  threadId: string,
  contextVersion: number,
  ownerProofIn: Environment | undefined,
) {
  const { agent } = target;
  const claims = { tenantId: agent.tenantId, agentId: agent.id, threadId, sub: target.subject };
  const proof =
    ownerProofIn === undefined
      ? undefined
      : await ownerProof(env.DO_NAME_KEY, {
          ...claims,
          environment: ownerProofIn,
          subjectKind: target.subjectKind,
        });
  const [launchToken, visitor] = await Promise.all([
    signLaunchToken(env, {
      ...claims,
      subjectKind: target.subjectKind,
      ...(target.origin !== undefined ? { origin: target.origin } : {}),
      ...(contextVersion > 0 ? { contextVersion } : {}),
      ...(target.apiKeyId !== undefined ? { apiKeyId: target.apiKeyId } : {}),
      ...(proof !== undefined ? { ownerProof: proof } : {}),
    }),
    target.issueVisitorToken
      ? signVisitorToken(env, { sub: target.subject, tenantId: agent.tenantId, agentId: agent.id })
      : undefined,
  ]);
  return { launchToken, visitorToken: visitor?.token };
}

/** Launches a new thread or refreshes the token of an existing one; throws the refusal as an AppError. */
export async function launchThread(env: Env, request: LaunchRequest, hooks: LaunchHooks): Promise<Launched> {
  const isBackend = request.kind === "private";
  const target = isBackend ? await resolvePrivate(env, request) : await resolvePublic(env, request, hooks);
  const { agent } = target;
  const environment = launchEnvironment(env);
  // A new thread could never run: refuse it here, before any limit or quota counts it and before anything is stored,
  // rather than let the browser find out from a failing socket. A refresh goes on: its thread keeps its own pin.
  if (target.threadId === undefined && !target.released) {
    throw new AppError("conflict", `This agent has no active release in ${environment}.`, {
      reason: "no_active_release",
    });
  }

  const existing = target.threadId === undefined ? null : await resumable(env, target, target.threadId);

  // A backend serves all its users from one address, so its launches are limited per subject; a browser's per (agent
  // key, client network), and a refresh also per visitor. A refresh (a new token for a thread found above) is not a
  // new launch: it takes no quota. A new launch takes the tenant's quota (and a public one its agent's share of it) in
  // one call, beside the limits; a launch they refuse gets it back, and nothing is stored before both admitted it
  // (docs/decisions.md, "Launch latency", "Launch budgets").
  const refresh = target.threadId !== undefined;
  const limits = async () => {
    if (isBackend) {
      await enforceSubjectLaunchLimit(env, agent.tenantId, target.subjectKind, target.subject);
    } else {
      await enforceLaunchRateLimit(env, agent.publicKey, request.clientIp);
      if (refresh) await enforceSubjectLaunchLimit(env, agent.tenantId, target.subjectKind, target.subject);
    }
  };
  if (refresh) await limits();
  else await admitNewLaunch(env, agent.tenantId, isBackend ? undefined : agent.id, limits);
  const threadId = target.threadId ?? newThreadId();
  // Read beside the registry write, once the limits admitted the launch. Best effort: the thread's
  // `ready` frame carries the same presentation, so a failed read leaves it out rather than failing the launch.
  const presentation = launchPresentation(
    deploymentStoreOf(env),
    {
      tenantId: agent.tenantId,
      agentId: agent.id,
      environment,
      threadId,
      existing: refresh,
      ...(existing !== null ? { pinnedVersionId: existing.versionId } : {}),
    },
    target.context?.variables ?? {},
  ).catch((error: unknown) => {
    console.error(
      JSON.stringify({ level: "error", message: "launch presentation failed", error: String(error) }),
    );
    return undefined;
  });
  const context = contextText(target.context?.variables ?? null);
  const toolPolicy = toolPolicyText(target.context?.toolPolicy);
  const tokens = (contextVersion: number) =>
    signTokens(env, target, threadId, contextVersion, refresh ? undefined : environment);
  // A new thread's tokens are signed while its registry row is written, and handed out only once it is.
  const fresh = refresh ? undefined : tokens(context === null && toolPolicy === null ? 0 : 1);
  fresh?.catch(() => undefined);
  if (!refresh) {
    try {
      await insertThread(env.DB, {
        tenantId: agent.tenantId,
        id: threadId,
        agentId: agent.id,
        environment,
        subject: target.subject,
        subjectKind: target.subjectKind,
        createdAt: new Date().toISOString(),
        context,
        toolPolicy,
      });
    } catch (error) {
      // Nothing may stay: the launch it counted is given back, no token leaves (the thread's object was never
      // reached), and the browser retries after Retry-After.
      await refundLaunchQuota(env, agent.tenantId, isBackend ? undefined : agent.id);
      throw databaseUnavailable(error);
    }
  }
  const { launchToken, visitorToken } =
    existing === null
      ? await fresh!
      : await tokens(await fromDatabase(relaunchContext(env, existing, target.context)));

  const shown = await presentation;
  return {
    token: launchToken.token,
    expiresAt: launchToken.expiresAt.toISOString(),
    threadId,
    ...(visitorToken !== undefined ? { visitorToken } : {}),
    ...(shown !== undefined ? { presentation: shown } : {}),
  };
}
