// What the object remembers per socket (in the SDK's hibernation-safe connection state), parsed on every read.
import type { Connection } from "agents";
import { z } from "zod";
import { requestMetaSchema, threadClaimsSchema } from "../contract";

const connectionStateSchema = z.object({
  claims: threadClaimsSchema,
  ready: z.boolean(),
  malformed: z.number().int(),
  lastActive: z.number(),
  /** The upgrade request (absent on sockets opened before it was kept). */
  meta: requestMetaSchema.optional(),
  /** A snapshot of its subject's frame budget (thread/frame-budget.ts), read back after the object hibernated. */
  frames: z.object({ tokens: z.number(), at: z.number() }).optional(),
  /** When the thread last marked itself active / read its sockets' standing (thread/object/socket-watch.ts). */
  markedAt: z.number().optional(),
  standingAt: z.number().optional(),
});

export type ConnectionState = z.infer<typeof connectionStateSchema>;

export function connectionState(connection: Connection): ConnectionState | null {
  const parsed = connectionStateSchema.safeParse(connection.state);
  return parsed.success ? parsed.data : null;
}
