// What the run's per-table stores share: how they are built and how a refused record reads.
import { z } from "zod";
import { fail, type Result } from "../../errors";

export interface RunStoreOptions {
  now: () => number;
  /** Secret values to redact from tool input/output, deltas and error text before storage. */
  secrets?: readonly string[];
  newId?: () => string;
}

export const recordIdSchema = z.string().min(1).max(128);

export function invalidRunRecord(error: z.ZodError): Result<never> {
  return fail("bad_request", "Invalid run record.", { fields: error.issues.map((i) => i.path.join(".")) });
}
