// One execution of one eval case (docs/evals.md#runs): a preview thread pinned to the target's artifact, with the
// case's tool mocks in place of every tool, fed the case's user messages through the same turn loop as any thread;
// its transcript judged, then the thread erased (it never shows in sessions, usage, analytics or webhooks).
import { newThreadId } from "../auth/thread-ids";
import type { Artifact } from "../control/artifact";
import { contextVariablesSchema } from "../control/context-variables";
import type { Environment } from "../control/deployment-store";
import { fail, ok, type Result, type RpcResult } from "../errors";
import type { CaseResult, EvalCase, EvalTarget, ExpectationFailure, JudgeVerdict } from "../shared/evals-api";
import { eraseThreadsRows } from "../storage/d1/erasures";
import { deletePreviews, insertPreviewThread } from "../storage/d1/thread-previews";
import { type EvalOutcome, type ThreadAddress, type ThreadClaims, threadStub } from "../thread/contract";
import { type CaseTranscript, checkExpectation, transcriptSha256 } from "./eval-expectations";
import { judgeCase } from "./eval-judge";
import { PREVIEW_TTL_MS } from "./preview-session";

/** What a run's cases are pinned to: the target's artifact, resolved once when the run was created. */
export interface EvalPin {
  versionId: string;
  version: number;
  digest: string;
  artifact: Artifact;
  target: EvalTarget;
}

export interface CaseJob {
  tenantId: string;
  agentId: string;
  environment: Environment;
  runId: string;
  pin: EvalPin;
  evalCase: EvalCase;
  repeat: number;
}

const MAX_TEXT_IN_RESULT = 8000;

/** Runs the case; a thread that cannot be reached is an error the caller retries, anything else is a result. */
export async function runCase(
  env: Env,
  job: CaseJob,
  now: () => number = Date.now,
): Promise<Result<CaseResult>> {
  const started = now();
  const threadId = newThreadId();
  const address: ThreadAddress = {
    tenantId: job.tenantId,
    environment: job.environment,
    agentId: job.agentId,
    threadId,
  };
  const claims: ThreadClaims = { ...address, sub: `eval:${job.runId}`, subjectKind: "user" };
  await insertPreviewThread(env.DB, {
    tenantId: job.tenantId,
    threadId,
    agentId: job.agentId,
    environment: job.environment,
    subject: claims.sub,
    target: job.pin.target,
    digest: job.pin.digest,
    createdAt: new Date(started).toISOString(),
    expiresAt: new Date(started + PREVIEW_TTL_MS).toISOString(),
  });
  const stub = await threadStub(env, address);
  try {
    const { target, ...pin } = job.pin;
    const opened = await stub.startPreview(claims, {
      ...pin,
      preview: { ...target, toolMocks: job.evalCase.toolMocks ?? {} },
    });
    if (!opened.ok) return fail("upstream_unavailable", `The eval thread did not start: ${opened.message}`);
    if (job.evalCase.context !== undefined) {
      const variables = contextVariablesSchema.safeParse(job.evalCase.context);
      if (!variables.success)
        return fail("bad_request", "The case's context is not valid context variables.");
      const adopted = await stub.adoptLaunchContext(address, { version: 1, variables: variables.data });
      if (!adopted.ok) return fail("bad_request", `The case's context was refused: ${adopted.message}`);
    }
    const failures: ExpectationFailure[] = [];
    let turn = 0;
    for (const message of job.evalCase.messages) {
      if (message.role !== "user") continue;
      turn += 1;
      const sent = await stub.postMessage(claims, {
        clientMessageId: `eval_${job.repeat}_${turn}_${job.evalCase.id}`.slice(0, 128),
        text: message.text,
      });
      if (!sent.ok) {
        failures.push({ index: -1, type: "run", message: `The turn was refused: ${sent.message}` });
        break;
      }
      const run = sent.value.reply.run;
      if (run !== null && run.status !== "succeeded") {
        failures.push({
          index: -1,
          type: "run",
          message: `Turn ${turn} ended ${run.status}${run.error !== undefined ? `: ${run.error.message}` : ""}.`,
        });
        break;
      }
    }
    const read: RpcResult<EvalOutcome | null> = await stub.evalOutcome(address);
    const outcome = read.ok ? read.value : null;
    if (outcome === null)
      return fail("upstream_unavailable", "The eval thread's transcript could not be read.");
    const transcript: CaseTranscript = {
      messages: outcome.messages.map((m) => ({ role: m.role, text: m.text.slice(0, MAX_TEXT_IN_RESULT) })),
      toolCalls: outcome.toolCalls.map((c) => ({
        name: c.name,
        input: parseJsonText(c.inputJson),
        output: parseJsonText(c.outputJson),
      })),
    };
    const mocks = job.evalCase.toolMocks ?? {};
    const unmocked = [...new Set(transcript.toolCalls.map((c) => c.name))].filter(
      (name) => !Object.hasOwn(mocks, name),
    );
    if (unmocked.length > 0) {
      failures.push({
        index: -1,
        type: "tool_mock",
        message: `The model called a tool the case has no mock for: ${unmocked.join(", ")}.`,
        seen: unmocked,
      });
    }
    const tokens = { ...outcome.tokens };
    const judge: JudgeVerdict[] = [];
    for (const [index, expectation] of job.evalCase.expect.entries()) {
      if (expectation.type === "judge") {
        const judged = await judgeCase(env, job.tenantId, expectation, index, transcript);
        judge.push(judged.verdict);
        tokens.input += judged.tokens.input;
        tokens.output += judged.tokens.output;
        if (!judged.verdict.passed) {
          failures.push({
            index,
            type: "judge",
            message: `The judge scored ${judged.verdict.score ?? "nothing"} (threshold ${expectation.threshold}).`,
            seen: { score: judged.verdict.score, reasoning: judged.verdict.reasoning },
          });
        }
        continue;
      }
      const failed = checkExpectation(expectation, index, transcript);
      if (failed !== null) failures.push(failed);
    }
    return ok({
      caseId: job.evalCase.id,
      repeat: job.repeat,
      passed: failures.length === 0,
      failures,
      judge,
      transcript: transcript as CaseResult["transcript"],
      transcriptSha256: await transcriptSha256(transcript),
      tokens,
      durationMs: Math.max(0, Math.round(now() - started)),
    });
  } finally {
    await eraseEvalThread(env, stub, address);
  }
}

/** The thread is gone once judged: its rows, its object and its preview row (the scheduled job retries a miss). */
async function eraseEvalThread(
  env: Env,
  stub: Awaited<ReturnType<typeof threadStub>>,
  address: ThreadAddress,
): Promise<void> {
  try {
    await eraseThreadsRows(env, address.tenantId, [address.threadId], new Date().toISOString());
    const erased = await stub.eraseThread(address);
    if (erased.ok) await deletePreviews(env.DB, address.tenantId, [address.threadId]);
  } catch (error) {
    console.warn(
      JSON.stringify({ level: "warn", message: "eval thread not erased yet", error: String(error) }),
    );
  }
}

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
