// `If-Match: "<revision>"` (strong, quoted) for resources saved with revision compare-and-swap: drafts, eval suites.
import { AppError } from "../errors";
import type { AppContext } from "./context";

const REVISION = /^"(0|[1-9][0-9]{0,14})"$/;

/** The revision the caller saw; `required` says what to send when the header is missing. */
export function ifMatchRevision(c: AppContext, required: string): number {
  const header = c.req.header("If-Match");
  if (header === undefined) throw new AppError("bad_request", `If-Match is required: ${required}`);
  const match = header.trim().match(REVISION);
  if (match === null) throw new AppError("bad_request", 'If-Match must be a quoted revision such as "3".');
  return Number(match[1]);
}

/** The revision the caller saw, or null when it sent no If-Match (the change applies to whatever is current). */
export function optionalIfMatchRevision(c: AppContext): number | null {
  return c.req.header("If-Match") === undefined ? null : ifMatchRevision(c, "");
}

export const etag = (revision: number) => `"${revision}"`;
