// The Worker's HTTP surface: middleware order, one error handler, and every route under /v1.
import { Hono } from "hono";
import type { AppEnv } from "./http/context";
import { notFound, onError } from "./http/error-handler";
import { htmlPolicy } from "./http/html-policy";
import { requestId } from "./http/request-id";
import { agents } from "./routes/agents";
import { analytics } from "./routes/analytics";
import { apiKeys } from "./routes/api-keys";
import { approvals } from "./routes/approvals";
import { assets } from "./routes/assets";
import { sessionAttachments, threadAttachments } from "./routes/attachments";
import { consoleRoutes } from "./routes/console";
import { contract } from "./routes/contract";
import { drafts } from "./routes/drafts";
import { erasures, retiredSubjects, subjectDigestKeys, subjectErasures, wellKnown } from "./routes/erasures";
import { health } from "./routes/health";
import { holds, subjectHolds } from "./routes/holds";
import { launch } from "./routes/launch";
import { me } from "./routes/me";
import { operator } from "./routes/operator";
import { releases } from "./routes/releases";
import { secrets } from "./routes/secrets";
import { sessions } from "./routes/sessions";
import { threads } from "./routes/threads";
import { usage } from "./routes/usage";
import { versions } from "./routes/versions";
import { webhooks } from "./routes/webhooks";

export function createApp() {
  const app = new Hono<AppEnv>();
  app.use("*", requestId);
  app.use("*", htmlPolicy);
  app.onError(onError);
  app.notFound(notFound);

  const v1 = new Hono<AppEnv>();
  v1.route("/", health);
  v1.route(
    "/",
    contract(() => app),
  );
  v1.route("/", launch);
  // Before `threads`, whose catch-all answers every other /threads/:threadId/* path.
  v1.route("/", threadAttachments);
  v1.route("/", threads);
  v1.route("/", me);
  v1.route("/agents", agents);
  // Mounted after `agents`, whose "*" tenantAuth and requireAdminForWrites cover every /agents/* path first.
  v1.route("/agents/:agentId/draft", drafts);
  v1.route("/agents/:agentId/versions", versions);
  v1.route("/agents/:agentId/releases", releases);
  v1.route("/api-keys", apiKeys);
  v1.route("/secrets", secrets);
  // Before `sessions`; it authenticates the tenant itself.
  v1.route("/sessions", sessionAttachments);
  v1.route("/sessions", sessions);
  v1.route("/approvals", approvals);
  v1.route("/holds", holds);
  v1.route("/subject-holds", subjectHolds);
  v1.route("/usage", usage);
  v1.route("/analytics", analytics);
  v1.route("/webhooks", webhooks);
  v1.route("/subject-erasures", subjectErasures);
  v1.route("/subject-digest-key", subjectDigestKeys);
  // The retired path forms (the subject in the URL): 410 naming the new route, before any credential is read.
  v1.route("/subjects", retiredSubjects);
  v1.route("/erasures", erasures);
  v1.route("/operator", operator);
  v1.route("/console", consoleRoutes);

  app.route("/v1", v1);
  app.route("/", wellKnown);
  app.route("/", assets);
  return app;
}

export const app = createApp();
