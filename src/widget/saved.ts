// The shape of the widget's persisted state, read back field by field (storage is writable by the host page).
import { isObj, isStr, nonEmpty } from "./checks";

export type PersistMode = "local" | "session" | "memory";

export interface Saved {
  threadId?: string;
  visitorToken?: string;
  runId?: string;
  seq?: number;
  /** The floating panel was open: the next page view reopens it (docs/widget.md#remembered-between-page-views). */
  open?: true;
  /** The agent's accent as the `:host` rule `accentCss` wrote, for the loader to draw the launcher with. */
  accent?: string;
}

/** The only shape `accentCss` writes (./presentation-rules.ts): custom properties of `:host`, nothing else. */
const ACCENT_RULE = /^:host\{[\w#:;()-]+\}$/;

const str = (v: unknown): string | undefined => {
  const value = nonEmpty(v);
  return value !== undefined && value.length < 8192 ? value : undefined;
};

/** Reads back only the fields we write, each type-checked; anything else in storage is ignored. */
export function parseSaved(text: string | null): Saved {
  if (text === null) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  if (!isObj(value)) return {};
  const v = value;
  const out: Saved = {};
  const threadId = str(v.threadId);
  const visitorToken = str(v.visitorToken);
  const runId = str(v.runId);
  if (threadId) out.threadId = threadId;
  if (visitorToken) out.visitorToken = visitorToken;
  if (runId) out.runId = runId;
  if (Number.isSafeInteger(v.seq) && (v.seq as number) >= 0) out.seq = v.seq as number;
  if (v.open === true) out.open = true;
  if (isStr(v.accent) && ACCENT_RULE.test(v.accent)) out.accent = v.accent;
  return out;
}

export function persistMode(value: string | null | undefined): PersistMode {
  return value === "session" || value === "memory" ? value : "local";
}
