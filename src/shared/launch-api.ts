// The launch contract (docs/api.md): what `POST /v1/agent-sessions` answers, shared by the Worker's tests and the client.
import { z } from "zod";
import { presentationSchema } from "./presentation";
import { PROTOCOL } from "./protocol";

export const launchResponse = z.object({
  /** The launch token: `new WebSocket(websocketUrl, ["agent.v1", "bearer." + token])`, or `Authorization: Bearer`. */
  token: z.string(),
  expiresAt: z.iso.datetime(),
  threadId: z.string(),
  websocketUrl: z.url(),
  threadUrl: z.url(),
  protocol: z.literal(PROTOCOL),
  /** A new anonymous visitor's token, to send back as `visitorToken` to resume its own threads. */
  visitorToken: z.string().optional(),
  /** How the pinned (or about to be pinned) version presents itself; absent when nothing can be shown yet. */
  presentation: presentationSchema.optional(),
});
export type LaunchResponse = z.infer<typeof launchResponse>;

/**
 * `POST /v1/agents/:agentId/draft/preview-session` (docs/api.md): a preview thread on exactly one of a draft revision or
 * a published version; `threadId` asks for a fresh token for a preview thread this call created.
 */
export const previewSessionRequest = z
  .strictObject({
    draftRevision: z.number().int().positive().optional(),
    version: z.number().int().positive().optional(),
    threadId: z
      .string()
      .regex(/^thr_[0-9a-f]{32}$/, "must be a thread id (thr_…)")
      .optional(),
  })
  .refine((body) => (body.draftRevision === undefined) !== (body.version === undefined), {
    message: "exactly one of draftRevision or version is required",
    path: ["draftRevision"],
  });
export type PreviewSessionRequest = z.infer<typeof previewSessionRequest>;

/** A launch body the widget takes as is, for a thread marked as a preview and erased at `previewExpiresAt`. */
export const previewSessionResponse = launchResponse.omit({ visitorToken: true }).extend({
  preview: z.literal(true),
  previewExpiresAt: z.iso.datetime(),
});
export type PreviewSessionResponse = z.infer<typeof previewSessionResponse>;
