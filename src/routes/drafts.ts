// Tenant admin: an agent's mutable draft, saved with If-Match revision compare-and-swap, and its preview threads.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { CanonicalJsonError, canonicalJson } from "../control/canonical-json";
import { errors, unwrap } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { etag, ifMatchRevision } from "../http/if-match";
import { readJson } from "../http/json-body";
import { loadAgent } from "../http/load-agent";
import { operation } from "../http/openapi";
import { deploymentStore } from "../http/store";
import { previewSession } from "../services/preview-session";
import { draftResponse, draftSavedResponse } from "../shared/api";
import { previewSessionRequest, previewSessionResponse } from "../shared/launch-api";

export const MAX_DRAFT_BYTES = 256 * 1024;

const definitionSchema = z
  .custom<Record<string, unknown>>(
    (value) => typeof value === "object" && value !== null && !Array.isArray(value),
    "must be a JSON object",
  )
  .meta({
    type: "object",
    description:
      "The agent artifact: its JSON Schema is GET /v1/schemas/artifact.json (checked in full at publish).",
  });

/** `If-Match: "<revision>"`, strong and quoted; `"0"` means "no draft yet". */
const expectedRevision = (c: AppContext) =>
  ifMatchRevision(c, 'send the current draft revision, or "0" to create.');

export const drafts = new Hono<AppEnv>()
  .put(
    "/",
    describeRoute(
      operation({
        tag: "Drafts",
        summary: "Save the draft (compare-and-swap on its revision)",
        description:
          "The body is the artifact definition (GET /v1/schemas/artifact.json); it is checked fully when a version is published.",
        auth: "tenantKey",
        headers: { "If-Match": 'Required. The current revision, quoted ("3"); "0" creates the first draft.' },
        body: definitionSchema,
        response: { status: 200, schema: draftSavedResponse, headers: { ETag: "The new revision, quoted." } },
        errors: [404, 412],
      }),
    ),
    async (c) => {
      const revision = expectedRevision(c);
      const definition = await readJson(c, definitionSchema, { maxBytes: MAX_DRAFT_BYTES });
      try {
        canonicalJson(definition);
      } catch (error) {
        // JSON.parse turns 1e400 into Infinity, which no digest can hold.
        if (error instanceof CanonicalJsonError)
          throw errors.badRequest("Draft holds a number JSON cannot keep.");
        throw error;
      }
      const agent = await loadAgent(c);
      const saved = unwrap(
        await deploymentStore(c).saveDraft(agent.tenantId, agent.id, revision, definition),
      );
      c.header("ETag", etag(saved.revision));
      return c.json({ revision: saved.revision });
    },
  )
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Drafts",
        summary: "Get the draft",
        auth: "tenantKey",
        response: { status: 200, schema: draftResponse, headers: { ETag: "The revision, quoted." } },
        errors: [404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const draft = await deploymentStore(c).getDraft(agent.tenantId, agent.id);
      if (draft === null) throw errors.notFound("Draft");
      c.header("ETag", etag(draft.revision));
      return c.json({ revision: draft.revision, definition: draft.definition, updatedAt: draft.updatedAt });
    },
  )
  .post(
    "/preview-session",
    describeRoute(
      operation({
        tag: "Drafts",
        summary:
          "Open a preview thread on a draft revision or a published version (the console's playground)",
        description:
          "Answers a launch body for a new preview thread pinned to `draftRevision` (checked as publishing checks it) or to `version`; with `threadId`, a fresh token for a live preview thread of the same target. Preview threads are marked `preview: true`, left out of session lists (unless `preview=true`), usage, analytics and webhooks, and erased after 24 h. The token works only from this deployment's own origin.",
        auth: "tenantKey",
        body: previewSessionRequest,
        response: { status: 201, schema: previewSessionResponse },
        errors: [404, 412, 429, 503],
      }),
    ),
    async (c) => {
      const input = await readJson(c, previewSessionRequest);
      const agent = await loadAgent(c);
      return c.json(
        await previewSession(
          c.env,
          { apiKeyId: c.get("tenant").apiKeyId, requestUrl: c.req.url },
          agent,
          input,
        ),
        201,
      );
    },
  );
