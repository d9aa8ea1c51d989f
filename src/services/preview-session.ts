// `POST /v1/agents/:agentId/draft/preview-session` (docs/api.md): the console's playground talks to a draft revision (or
// a published version) through a preview thread — a real thread object, pinned when it is created to the artifact
// previewed, marked `preview` in the registry so that no list, usage or analytics counts it, and erased after 24 h.
import { enforceSubjectLaunchLimit } from "../auth/abuse-limits";
import { signLaunchToken } from "../auth/launch-token";
import { newThreadId } from "../auth/thread-ids";
import type { Artifact } from "../control/artifact";
import { digestOf } from "../control/canonical-json";
import type { AgentEntity, Environment } from "../control/deployment-store";
import { artifactFromDefinition } from "../control/store-rules";
import { AppError, databaseUnavailable, errors, fromDatabase, unwrap } from "../errors";
import { requestArtifactIssues } from "../http/artifact-checks";
import { deploymentStoreOf } from "../http/store";
import { threadUrls } from "../http/thread-urls";
import type { PreviewSessionRequest, PreviewSessionResponse } from "../shared/launch-api";
import { PROTOCOL } from "../shared/protocol";
import { findPreview, insertPreviewThread, type PreviewTarget } from "../storage/d1/thread-previews";
import { type PreviewPin, threadStub } from "../thread/contract";

/** A preview thread lives a day; the scheduled job erases it then. */
export const PREVIEW_TTL_MS = 24 * 60 * 60 * 1000;

/** Every preview thread of one API key has this subject: the key's console, not a visitor or a user of the tenant. */
const previewSubject = (apiKeyId: string) => `console:${apiKeyId}`;

const threadNotFound = () => new AppError("not_found", "Thread not found.");

/** The artifact previewed (or evaluated), checked as publishing would check it; a stale draft revision is a 412. */
export async function previewedPin(
  env: Env,
  requestUrl: string,
  agent: AgentEntity,
  target: PreviewTarget,
): Promise<PreviewPin> {
  const store = deploymentStoreOf(env);
  if ("version" in target) {
    const found = await fromDatabase(store.getVersion(agent.tenantId, agent.id, target.version));
    if (!found.ok && found.code === "not_found") throw errors.notFound("Version");
    const version = unwrap(found);
    return {
      versionId: version.id,
      version: version.version,
      digest: version.digest,
      artifact: version.artifact,
      preview: { version: version.version },
    };
  }
  const draft = await fromDatabase(store.getDraft(agent.tenantId, agent.id));
  if (draft === null) throw errors.notFound("Draft");
  if (draft.revision !== target.draftRevision) {
    throw new AppError("precondition_failed", "Draft revision does not match the current draft.");
  }
  const own = requestArtifactIssues(env, requestUrl, draft.definition);
  if (own.length > 0) throw errors.badRequest("Draft is not a valid agent artifact.", own);
  const artifact: Artifact = unwrap(artifactFromDefinition(draft.definition));
  return {
    versionId: `draft:${agent.id}:${draft.revision}`,
    // Not a published version: 0 wherever a version number is shown or projected.
    version: 0,
    digest: await digestOf(artifact),
    artifact,
    preview: { draftRevision: draft.revision },
  };
}

const sameTarget = (a: PreviewTarget, b: PreviewTarget) =>
  "version" in a
    ? "version" in b && a.version === b.version
    : "draftRevision" in b && a.draftRevision === b.draftRevision;

/** Who asks for a preview, and where: the console's API key and the URL the request reached. */
export interface PreviewCaller {
  apiKeyId: string;
  requestUrl: string;
}

/** Creates a preview thread, or refreshes the token of one (`threadId`); answers the widget's launch body. */
export async function previewSession(
  env: Env,
  caller: PreviewCaller,
  agent: AgentEntity,
  input: PreviewSessionRequest,
): Promise<PreviewSessionResponse> {
  const environment = env.ENVIRONMENT as Environment;
  const subject = previewSubject(caller.apiKeyId);
  const target: PreviewTarget =
    input.version !== undefined ? { version: input.version } : { draftRevision: input.draftRevision ?? 0 };
  const now = new Date();
  let threadId: string;
  let expiresAt: string;
  if (input.threadId !== undefined) {
    // A refresh: only a live preview this key created, of the same target.
    const found = await fromDatabase(
      findPreview(env.DB, agent.tenantId, agent.id, input.threadId, now.toISOString()),
    );
    if (found === null || !sameTarget(found.target, target)) throw threadNotFound();
    threadId = found.threadId;
    expiresAt = found.expiresAt;
  } else {
    const pin = await previewedPin(env, caller.requestUrl, agent, target);
    await enforceSubjectLaunchLimit(env, agent.tenantId, "user", subject);
    threadId = newThreadId();
    expiresAt = new Date(now.getTime() + PREVIEW_TTL_MS).toISOString();
    try {
      await insertPreviewThread(env.DB, {
        tenantId: agent.tenantId,
        threadId,
        agentId: agent.id,
        environment,
        subject,
        target,
        digest: pin.digest,
        createdAt: now.toISOString(),
        expiresAt,
      });
    } catch (error) {
      throw databaseUnavailable(error);
    }
    // The rows come first: an object that missed its pin is an unreachable preview the scheduled job erases.
    const address = { tenantId: agent.tenantId, environment, agentId: agent.id, threadId };
    let started: Awaited<ReturnType<Awaited<ReturnType<typeof threadStub>>["startPreview"]>>;
    try {
      started = await (await threadStub(env, address)).startPreview(
        { ...address, sub: subject, subjectKind: "user" },
        pin,
      );
    } catch (error) {
      throw new AppError("upstream_unavailable", "The preview thread is unavailable; try again.", {
        cause: error,
      });
    }
    unwrap(started);
  }

  // The console's own pages are the only place a preview token works: it is bound to this deployment's origin.
  const origin = new URL(caller.requestUrl).origin;
  const token = await signLaunchToken(env, {
    tenantId: agent.tenantId,
    agentId: agent.id,
    threadId,
    sub: subject,
    subjectKind: "user",
    origin,
    preview: true,
  });
  return {
    token: token.token,
    expiresAt: token.expiresAt.toISOString(),
    threadId,
    ...threadUrls(caller.requestUrl, threadId),
    protocol: PROTOCOL,
    preview: true,
    previewExpiresAt: expiresAt,
  };
}
