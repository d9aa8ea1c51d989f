// What an eval case's thread did (docs/evals.md): its active branch as role and text, every tool call, its tokens.
import { ok, type Result } from "../../errors";
import { MAX_PAGE_LIMIT } from "../../storage/thread/entry-store";
import { ToolCallStore } from "../../storage/thread/tool-call-store";
import { UsageStore } from "../../storage/thread/usage-store";
import type { EvalOutcome } from "../contract";
import type { ThreadRuntime } from "./thread-runtime";

/** The branch read for a case: far more turns than any case holds (cases cap their messages). */
const BRANCH_LIMIT = MAX_PAGE_LIMIT;

export function evalOutcome(storage: DurableObjectStorage, runtime: ThreadRuntime): Result<EvalOutcome> {
  const leafId = runtime.leafId();
  const page = leafId === null ? ok({ items: [] }) : runtime.entries.branch(leafId, { limit: BRANCH_LIMIT });
  if (!page.ok) return page;
  const entries = page.value.items;
  const calls = new ToolCallStore(storage, { now: Date.now });
  const usage = new UsageStore(storage, { now: Date.now });
  const runIds = [...new Set(entries.flatMap((e) => (e.runId !== null ? [e.runId] : [])))];
  const tokens = { input: 0, output: 0 };
  for (const runId of runIds) {
    const totals = usage.totalsForRun(runId);
    tokens.input += totals.inputTokens;
    tokens.output += totals.outputTokens;
  }
  const runs = runIds.map((id) => runtime.runs.get(id)).filter((r) => r !== null);
  return ok({
    messages: entries
      .filter((e) => e.kind === "message" && e.role !== null)
      .map((e) => ({ role: e.role ?? "user", text: textOf(e.body) })),
    toolCalls: runIds.flatMap((runId) =>
      calls.forRun(runId).map((c) => ({
        name: c.name,
        inputJson: JSON.stringify(c.input),
        outputJson: JSON.stringify(c.output ?? null),
        status: c.status,
      })),
    ),
    runs: runs.map((r) => ({ status: r.status, error: r.error?.message ?? null })),
    tokens,
  });
}

function textOf(body: unknown): string {
  if (typeof body === "object" && body !== null && "text" in body && typeof body.text === "string")
    return body.text;
  return "";
}
