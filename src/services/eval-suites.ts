// Eval suites and runs for the admin API (docs/evals.md): cases copied from a real thread's branch (redacted as the
// export is), suites checked before they are saved, and a run pinned to its target and handed to the tenant's
// TenantEvals object.

import type { AgentEntity, Environment } from "../control/deployment-store";
import { newId } from "../control/ids";
import { jsonSchemaIssues } from "../control/json-schema-check";
import { AppError, databaseUnavailable, errors, type RpcResult, unwrap } from "../errors";
import {
  type CaseResult,
  type EvalCase,
  type EvalCaseInput,
  type EvalTarget,
  MAX_MESSAGE_CHARS,
  MAX_MESSAGES_PER_CASE,
  type RunResponse,
} from "../shared/evals-api";
import { caseResults, type EvalRun, insertRun } from "../storage/d1/eval-runs";
import type { EvalSuite } from "../storage/d1/eval-suites";
import { findThread } from "../storage/d1/thread-registry";
import { createRedactor } from "../storage/redact";
import { threadExportSchema } from "../storage/thread/thread-export";
import { regexProblem } from "./eval-regex";
import type { RunSpec } from "./eval-runs";
import { previewedPin } from "./preview-session";
import { exportSession } from "./sessions";

/** Every expectation's own checks that zod cannot make: a bounded regex, valid JSON Schemas. */
function expectationIssues(cases: readonly EvalCaseInput[]): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  cases.forEach((c, i) => {
    (c.expect ?? []).forEach((e, j) => {
      const path = `cases.${i}.expect.${j}`;
      if (e.type === "regex") {
        const problem = regexProblem(e.pattern, e.flags);
        if (problem !== null) issues.push({ path: `${path}.pattern`, message: problem });
      }
      if (e.type === "json_schema" || (e.type === "tool_called" && e.input !== undefined)) {
        const schema = e.type === "json_schema" ? e.schema : e.input;
        for (const issue of jsonSchemaIssues(schema)) {
          const at = e.type === "json_schema" ? "schema" : "input";
          issues.push({ path: `${path}.${at}${issue.path ? `.${issue.path}` : ""}`, message: issue.message });
        }
      }
    });
  });
  return issues;
}

/** The branch of a real thread up to `entryId` as case messages, redacted as the thread's export is. */
export async function messagesFromThread(
  env: Env,
  agent: AgentEntity,
  from: { threadId: string; entryId: string },
): Promise<EvalCase["messages"]> {
  const thread = await findThread(env.DB, agent.tenantId, from.threadId).catch((error) => {
    throw databaseUnavailable(error);
  });
  if (thread === null || thread.deletedAt !== null || thread.agentId !== agent.id)
    throw errors.notFound("Thread");
  const stream = await exportSession(env, thread);
  if (stream === null) throw errors.notFound("Thread");
  const text = await new Response(stream).text();
  const exported = threadExportSchema.parse(JSON.parse(text));
  const byId = new Map(exported.entries.map((e) => [e.id, e]));
  if (!byId.has(from.entryId)) throw errors.notFound("Entry");
  const branch: typeof exported.entries = [];
  for (
    let at = byId.get(from.entryId);
    at !== undefined;
    at = at.parentId === null ? undefined : byId.get(at.parentId)
  ) {
    branch.unshift(at);
  }
  // The export's own redaction (key-shaped strings) once more over the copy: a case is shared with CI logs.
  const redactor = createRedactor([]);
  const messages = branch.flatMap((e) => {
    if (e.kind !== "message" || (e.role !== "user" && e.role !== "assistant")) return [];
    const body = e.body as { text?: unknown };
    const said = typeof body?.text === "string" ? redactor.text(body.text).slice(0, MAX_MESSAGE_CHARS) : "";
    return said === "" ? [] : [{ role: e.role, text: said }];
  });
  if (!messages.some((m) => m.role === "user")) {
    throw errors.badRequest("The branch has no user message to replay.");
  }
  return messages.slice(-MAX_MESSAGES_PER_CASE);
}

/** The cases as stored: each one's messages copied from its thread when it named one instead. */
export async function resolveCases(
  env: Env,
  agent: AgentEntity,
  inputs: readonly EvalCaseInput[],
): Promise<EvalCase[]> {
  const issues = expectationIssues(inputs);
  if (issues.length > 0) throw errors.badRequest("The suite's expectations are invalid.", issues);
  const out: EvalCase[] = [];
  for (const input of inputs) {
    const messages =
      input.messages ??
      (input.fromThread !== undefined ? await messagesFromThread(env, agent, input.fromThread) : []);
    out.push({
      id: input.id,
      messages,
      ...(input.fromThread !== undefined ? { fromThread: input.fromThread } : {}),
      ...(input.context !== undefined ? { context: input.context } : {}),
      ...(input.toolMocks !== undefined ? { toolMocks: input.toolMocks } : {}),
      expect: input.expect ?? [],
    });
  }
  return out;
}

/** A case id not yet in the suite: `case-<n>`. */
export function freshCaseId(cases: readonly EvalCase[]): string {
  const taken = new Set(cases.map((c) => c.id));
  for (let n = cases.length + 1; ; n++) if (!taken.has(`case-${n}`)) return `case-${n}`;
}

/** Pins a new run to its target (a stale draft revision is a 412), stores it and hands it to the tenant's object. */
export async function startRun(
  env: Env,
  requestUrl: string,
  agent: AgentEntity,
  suite: EvalSuite,
  target: EvalTarget,
  repeats: number,
): Promise<EvalRun["id"]> {
  const pin = await previewedPin(env, requestUrl, agent, target);
  const runId = newId("er");
  const spec: RunSpec = {
    tenantId: agent.tenantId,
    agentId: agent.id,
    environment: env.ENVIRONMENT as Environment,
    suiteId: suite.id,
    pin: {
      versionId: pin.versionId,
      version: pin.version,
      digest: pin.digest,
      artifact: pin.artifact,
      target,
    },
    cases: suite.cases,
    repeats,
  };
  try {
    await insertRun(env.DB, {
      tenantId: agent.tenantId,
      id: runId,
      agentId: agent.id,
      suiteId: suite.id,
      suiteRevision: suite.revision,
      target,
      digest: pin.digest,
      repeats,
      total: suite.cases.length * repeats,
      now: new Date().toISOString(),
    });
  } catch (error) {
    throw databaseUnavailable(error);
  }
  let started: RpcResult<null>;
  try {
    started = await env.EVALS.get(env.EVALS.idFromName(agent.tenantId)).start(agent.tenantId, runId, spec);
  } catch (error) {
    throw new AppError("upstream_unavailable", "The eval runner is unavailable; try again.", {
      cause: error,
    });
  }
  unwrap(started);
  return runId;
}

/** A run without its case results (the runs list). */
export function runSummary(run: EvalRun): Omit<RunResponse, "cases"> {
  const done = run.status === "completed" || run.status === "failed";
  const durationMs =
    done && run.completedAt !== null
      ? Math.max(0, Date.parse(run.completedAt) - Date.parse(run.createdAt))
      : null;
  return {
    id: run.id,
    agentId: run.agentId,
    suiteId: run.suiteId,
    suiteRevision: run.suiteRevision,
    target: run.target,
    artifactDigest: run.digest,
    repeats: run.repeats,
    status: run.status,
    total: run.total,
    passed: run.passed,
    failed: run.failed,
    passRate: done ? (run.total === 0 ? 1 : run.passed / run.total) : null,
    tokens: { input: run.inputTokens, output: run.outputTokens },
    durationMs,
    createdAt: run.createdAt,
    completedAt: run.completedAt,
  };
}

/** A run with every case result stored so far. */
export async function runView(env: Env, run: EvalRun): Promise<RunResponse> {
  const cases: CaseResult[] = await caseResults(env.DB, run.tenantId, run.id);
  return { ...runSummary(run), cases };
}
