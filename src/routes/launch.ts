// POST /v1/agent-sessions: turns a public agent key (browser) or a tenant key + subject (backend) into a launch token;
// the launch itself is src/services/launch/launch.ts.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { clientIp } from "../auth/rate-limit";
import { THREAD_ID_PATTERN } from "../auth/thread-ids";
import { contextVariablesSchema } from "../control/context-variables";
import { toolPolicySchema } from "../control/tool-policy";
import { AppError, fromDatabase } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { failedLaunchLimit } from "../http/failed-launch-limit";
import { parseWith, readJsonText } from "../http/json-body";
import { launchCors } from "../http/launch-cors";
import { operation } from "../http/openapi";
import { authenticateApiKey } from "../http/tenant-auth";
import { threadUrls } from "../http/thread-urls";
import { type LaunchRequest, launchThread } from "../services/launch/launch";
import { PROTOCOL } from "../shared/protocol";
import { launchResponse } from "../shared/thread-api";

export const MAX_LAUNCH_BODY_BYTES = 8 * 1024;
/** A backend launch may carry up to 8 KiB of context variables beside the rest (docs/decisions.md). */
export const MAX_PRIVATE_LAUNCH_BODY_BYTES = 16 * 1024;

const agentKey = z.string().regex(/^pk_[A-Za-z0-9_-]{8,128}$/, "must be a public agent key (pk_…)");
const threadId = z.string().regex(THREAD_ID_PATTERN, "must be a thread id (thr_…)");

const publicLaunchSchema = z.strictObject({
  agentKey,
  threadId: threadId.optional(),
  visitorToken: z.string().min(1).max(4096).optional(),
  context: z.never("is accepted only on a private launch (Authorization: Bearer sk_…)").optional(),
  toolPolicy: z.never("is accepted only on a private launch (Authorization: Bearer sk_…)").optional(),
});

const privateLaunchSchema = z
  .strictObject({
    agentKey: agentKey.optional(),
    agentId: z.string().min(1).max(128).optional(),
    subject: z.string().min(1).max(256),
    threadId: threadId.optional(),
    context: contextVariablesSchema.optional(),
    toolPolicy: toolPolicySchema.optional(),
  })
  .refine((body) => (body.agentKey === undefined) !== (body.agentId === undefined), {
    message: "exactly one of agentKey or agentId is required",
    path: ["agentKey"],
  });

/** A browser's launch: its body, its `Origin` and the client address its limit counts. */
function publicLaunch(c: AppContext, raw: unknown): LaunchRequest {
  const body = parseWith(publicLaunchSchema, raw);
  return {
    kind: "public",
    agentKey: body.agentKey,
    ...(body.threadId !== undefined ? { threadId: body.threadId } : {}),
    ...(body.visitorToken !== undefined ? { visitorToken: body.visitorToken } : {}),
    origin: c.req.header("Origin"),
    clientIp: clientIp(c.req.raw),
  };
}

/** The backend's `sk_` key is checked before its body is parsed: a read-only key is refused whatever it sends. */
async function privateLaunch(c: AppContext, raw: unknown): Promise<LaunchRequest> {
  const principal = await fromDatabase(authenticateApiKey(c.env, c.req.header("Authorization")));
  if (principal === null) throw new AppError("unauthenticated", "A valid API key is required.");
  // From here on the caller is the tenant's backend: its failures are its own, not a client network's.
  c.set("tenant", principal);
  if (principal.scope !== "admin") throw new AppError("forbidden", "This API key is read-only.");
  const body = parseWith(privateLaunchSchema, raw);
  return { kind: "private", tenantId: principal.tenantId, apiKeyId: principal.apiKeyId, ...body };
}

export const launch = new Hono<AppEnv>()
  .use("/agent-sessions", failedLaunchLimit, launchCors.response)
  .options("/agent-sessions", launchCors.preflight)
  .post(
    "/agent-sessions",
    describeRoute(
      operation({
        tag: "Launch",
        summary: "Launch: a token for a new or resumed thread",
        description:
          "Public agent, from a browser: `{agentKey, threadId?, visitorToken?}` and an allowed `Origin`, no Authorization. Private agent, from the tenant's backend: `Authorization: Bearer sk_…` and `{agentKey | agentId, subject, threadId?, context?, toolPolicy?}`; each private launch replaces the thread's context and tool policy (absent: none). 409 `conflict` with reason `no_active_release` when the agent has no active release here.",
        auth: ["none", "tenantKey"],
        body: z.union([publicLaunchSchema, privateLaunchSchema]),
        response: { status: 201, schema: launchResponse },
        errors: [403, 409, 429, 503],
      }),
    ),
    async (c) => {
      const isBackend = c.req.header("Authorization") !== undefined;
      const raw = await readJsonText(c, isBackend ? MAX_PRIVATE_LAUNCH_BODY_BYTES : MAX_LAUNCH_BODY_BYTES);
      const request = isBackend ? await privateLaunch(c, raw) : publicLaunch(c, raw);
      const launched = await launchThread(c.env, request, {
        originVerified: (origin) => c.set("launchOrigin", origin),
      });
      return c.json(
        {
          token: launched.token,
          expiresAt: launched.expiresAt,
          threadId: launched.threadId,
          ...threadUrls(c.req.url, launched.threadId),
          protocol: PROTOCOL,
          ...(launched.visitorToken !== undefined ? { visitorToken: launched.visitorToken } : {}),
          ...(launched.presentation !== undefined ? { presentation: launched.presentation } : {}),
        },
        201,
      );
    },
  );
