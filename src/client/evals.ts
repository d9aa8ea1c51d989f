// Eval suites and runs (docs/evals.md), typed from src/shared: what a tenant's CI and the console call.
import type { z } from "zod";
import type {
  addCaseRequest,
  createRunRequest,
  createSuiteRequest,
  patchSuiteRequest,
  RunResponse,
  SuiteResponse,
} from "../shared/evals-api";
import { type Page, type PageQuery, seg, type Transport } from "./http";

export type {
  CaseResult,
  EvalCase,
  EvalTarget,
  Expectation,
  ExpectationFailure,
  ReleaseGate,
  RunResponse,
  SuiteResponse,
} from "../shared/evals-api";
export type CreateSuiteRequest = z.input<typeof createSuiteRequest>;
export type PatchSuiteRequest = z.input<typeof patchSuiteRequest>;
export type AddCaseRequest = z.input<typeof addCaseRequest>;
export type CreateRunRequest = z.input<typeof createRunRequest>;
export type RunSummary = Omit<RunResponse, "cases">;

const base = (agentId: string) => `/v1/agents/${seg(agentId)}/eval-suites`;

/** An agent's eval suites, revisioned with If-Match like drafts, and their runs. */
export class Evals {
  constructor(readonly t: Transport) {}
  create(agentId: string, body: CreateSuiteRequest): Promise<SuiteResponse> {
    return this.t.json("POST", base(agentId), { body });
  }
  list(agentId: string, query: PageQuery = {}): Promise<Page<SuiteResponse>> {
    return this.t.json("GET", base(agentId), { query: { cursor: query.cursor, limit: query.limit } });
  }
  get(agentId: string, suiteId: string): Promise<SuiteResponse> {
    return this.t.json("GET", `${base(agentId)}/${seg(suiteId)}`);
  }
  /** Saves only at `revision`; a stale one is `precondition_failed` (412). */
  update(
    agentId: string,
    suiteId: string,
    patch: PatchSuiteRequest,
    revision: number,
  ): Promise<SuiteResponse> {
    return this.t.json("PATCH", `${base(agentId)}/${seg(suiteId)}`, {
      body: patch,
      headers: { "If-Match": `"${revision}"` },
    });
  }
  delete(agentId: string, suiteId: string): Promise<void> {
    return this.t.empty("DELETE", `${base(agentId)}/${seg(suiteId)}`);
  }
  /** A case copied from a thread's branch up to `fromThread.entryId`, redacted as the export is. */
  addCase(agentId: string, suiteId: string, body: AddCaseRequest): Promise<SuiteResponse> {
    return this.t.json("POST", `${base(agentId)}/${seg(suiteId)}/cases`, { body });
  }
  /** Starts a run (202); follow it with `run` until `status` is `completed`. */
  startRun(
    agentId: string,
    suiteId: string,
    body: CreateRunRequest,
  ): Promise<{ runId: string; status: string }> {
    return this.t.json("POST", `${base(agentId)}/${seg(suiteId)}/runs`, { body });
  }
  run(agentId: string, suiteId: string, runId: string): Promise<RunResponse> {
    return this.t.json("GET", `${base(agentId)}/${seg(suiteId)}/runs/${seg(runId)}`);
  }
  /** The suite's latest runs, newest first, without case results. */
  runs(agentId: string, suiteId: string): Promise<{ items: RunSummary[] }> {
    return this.t.json("GET", `${base(agentId)}/${seg(suiteId)}/runs`);
  }
}
