// The one error envelope of the object's fetch paths (WebSocket upgrade, SSE): the object writes it, the Worker reads it.
import { z } from "zod";
import { type Refusal, refusal } from "../../errors";
import { ERROR_REASONS } from "../../shared/error-reasons";
import { ERROR_CODES, HTTP_STATUS } from "../../shared/errors";

/** A `Refusal` (src/errors.ts) as JSON: the same shape the object's RPC methods return on failure. */
const refusalSchema = z.strictObject({
  ok: z.literal(false),
  code: z.enum(ERROR_CODES),
  reason: z.enum(ERROR_REASONS).optional(),
  message: z.string(),
  retryAfter: z.number().optional(),
});

export function refusalResponse(failure: Refusal): Response {
  return Response.json(refusal(failure), { status: HTTP_STATUS[failure.code] });
}

/** The object's refusal; a body that is not one is the Worker's internal error. */
export async function responseRefusal(res: Response): Promise<Refusal> {
  const parsed = refusalSchema.safeParse(await res.json().catch(() => null));
  return parsed.success ? parsed.data : { ok: false, code: "internal", message: "Internal error." };
}
