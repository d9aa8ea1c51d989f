// The launch contract (SPEC §3.1): what `POST /v1/agent-sessions` answers, shared by the Worker's tests and the client.
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
