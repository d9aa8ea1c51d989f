// Tenant admin: an agent's eval suites (revisioned with If-Match), cases copied from a thread, and runs (docs/evals.md).
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { newId } from "../control/ids";
import { errors, fromDatabase, unwrap } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { etag, ifMatchRevision, optionalIfMatchRevision } from "../http/if-match";
import { readJson } from "../http/json-body";
import { loadAgent } from "../http/load-agent";
import { operation } from "../http/openapi";
import {
  freshCaseId,
  messagesFromThread,
  resolveCases,
  runSummary,
  runView,
  startRun,
} from "../services/eval-suites";
import { listResponse } from "../shared/api";
import {
  addCaseRequest,
  createdRunResponse,
  createRunRequest,
  createSuiteRequest,
  MAX_CASES_PER_SUITE,
  patchSuiteRequest,
  runResponse,
  type SuiteResponse,
  suiteResponse,
} from "../shared/evals-api";
import { pageQuery } from "../shared/sessions-api";
import { getRun, listRuns } from "../storage/d1/eval-runs";
import {
  deleteSuite,
  type EvalSuite,
  getSuite,
  insertSuite,
  listSuites,
  updateSuite,
} from "../storage/d1/eval-suites";

/** Suites and the whole suite document are small JSON: a 200-case suite fits well within this. */
const MAX_SUITE_BYTES = 1024 * 1024;
const RUNS_LISTED = 50;

function suiteView(suite: EvalSuite): SuiteResponse {
  return {
    id: suite.id,
    agentId: suite.agentId,
    name: suite.name,
    revision: suite.revision,
    cases: suite.cases,
    createdAt: suite.createdAt,
    updatedAt: suite.updatedAt,
  };
}

async function loadSuite(c: AppContext) {
  const agent = await loadAgent(c);
  const suite = await fromDatabase(
    getSuite(c.env.DB, agent.tenantId, agent.id, c.req.param("suiteId") ?? ""),
  );
  if (suite === null) throw errors.notFound("Suite");
  return { agent, suite };
}

const saved = (c: AppContext, suite: EvalSuite, status: 200 | 201) => {
  c.header("ETag", etag(suite.revision));
  return c.json(suiteView(suite), status);
};

const runsList = z.strictObject({ items: z.array(runResponse.omit({ cases: true })) });

export const evals = new Hono<AppEnv>()
  .post(
    "/",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "Create an eval suite",
        description:
          "Cases carry `messages` or `fromThread` (a real thread's branch, copied and redacted as the export is). Regex patterns are bounded (docs/evals.md#regex).",
        auth: "tenantKey",
        body: createSuiteRequest,
        response: { status: 201, schema: suiteResponse, headers: { ETag: "The revision, quoted." } },
        errors: [404, 503],
      }),
    ),
    async (c) => {
      const input = await readJson(c, createSuiteRequest, { maxBytes: MAX_SUITE_BYTES });
      const agent = await loadAgent(c);
      const cases = await resolveCases(c.env, agent, input.cases);
      const suite = await fromDatabase(
        insertSuite(c.env.DB, {
          tenantId: agent.tenantId,
          id: newId("es"),
          agentId: agent.id,
          name: input.name,
          cases,
          now: new Date().toISOString(),
        }),
      );
      return saved(c, suite, 201);
    },
  )
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "List an agent's eval suites",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(suiteResponse) },
        errors: [400, 404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const limit = Math.min(Number(c.req.query("limit") ?? 50) || 50, 100);
      const after = c.req.query("cursor");
      const items = await fromDatabase(
        listSuites(c.env.DB, agent.tenantId, agent.id, { limit: limit + 1, ...(after ? { after } : {}) }),
      );
      const page = items.slice(0, limit);
      const last = page[page.length - 1];
      return c.json({
        items: page.map(suiteView),
        ...(items.length > limit && last !== undefined ? { nextCursor: last.id } : {}),
      });
    },
  )
  .get(
    "/:suiteId",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "Get an eval suite",
        auth: "tenantKey",
        response: { status: 200, schema: suiteResponse, headers: { ETag: "The revision, quoted." } },
        errors: [404],
      }),
    ),
    async (c) => saved(c, (await loadSuite(c)).suite, 200),
  )
  .patch(
    "/:suiteId",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "Change an eval suite (compare-and-swap on its revision)",
        auth: "tenantKey",
        headers: { "If-Match": 'Required. The current revision, quoted ("3").' },
        body: patchSuiteRequest,
        response: { status: 200, schema: suiteResponse, headers: { ETag: "The new revision, quoted." } },
        errors: [404, 412, 503],
      }),
    ),
    async (c) => {
      const revision = ifMatchRevision(c, "send the suite's current revision.");
      const input = await readJson(c, patchSuiteRequest, { maxBytes: MAX_SUITE_BYTES });
      const { agent, suite } = await loadSuite(c);
      if (suite.revision !== revision)
        throw errors.preconditionFailed("Suite revision does not match the current suite.");
      const cases = input.cases === undefined ? suite.cases : await resolveCases(c.env, agent, input.cases);
      const updated = unwrap(
        await fromDatabase(
          updateSuite(
            c.env.DB,
            { ...suite, name: input.name ?? suite.name, cases, now: new Date().toISOString() },
            revision,
          ),
        ),
      );
      return saved(c, updated, 200);
    },
  )
  .delete(
    "/:suiteId",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "Delete an eval suite (its runs stay readable by id)",
        auth: "tenantKey",
        headers: { "If-Match": "Optional. Deletes only at this revision, quoted." },
        response: { status: 204 },
        errors: [404, 412],
      }),
    ),
    async (c) => {
      const revision = optionalIfMatchRevision(c);
      const { agent, suite } = await loadSuite(c);
      const gone = await fromDatabase(deleteSuite(c.env.DB, agent.tenantId, agent.id, suite.id, revision));
      if (!gone) throw errors.preconditionFailed("Suite revision does not match the current suite.");
      return c.body(null, 204);
    },
  )
  .post(
    "/:suiteId/cases",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "Add a case copied from a thread's branch up to an entry",
        description:
          "The branch from the thread's root to `entryId` becomes the case's messages, redacted as the thread's export is. Answers the saved suite.",
        auth: "tenantKey",
        headers: { "If-Match": "Optional. Adds only at this suite revision, quoted." },
        body: addCaseRequest,
        response: { status: 201, schema: suiteResponse, headers: { ETag: "The new revision, quoted." } },
        errors: [404, 409, 412, 502, 503],
      }),
    ),
    async (c) => {
      const expected = optionalIfMatchRevision(c);
      const input = await readJson(c, addCaseRequest);
      const { agent, suite } = await loadSuite(c);
      if (expected !== null && expected !== suite.revision) {
        throw errors.preconditionFailed("Suite revision does not match the current suite.");
      }
      if (suite.cases.length >= MAX_CASES_PER_SUITE) {
        throw errors.conflict(`A suite holds at most ${MAX_CASES_PER_SUITE} cases.`);
      }
      const id = input.id ?? freshCaseId(suite.cases);
      if (suite.cases.some((existing) => existing.id === id))
        throw errors.conflict(`The suite has a case "${id}".`);
      const messages = await messagesFromThread(c.env, agent, input.fromThread);
      const [added] = await resolveCases(c.env, agent, [
        {
          id,
          messages,
          fromThread: input.fromThread,
          expect: input.expect ?? [],
          ...(input.toolMocks !== undefined ? { toolMocks: input.toolMocks } : {}),
        },
      ]);
      if (added === undefined) throw errors.badRequest("The case is invalid.");
      const updated = unwrap(
        await fromDatabase(
          updateSuite(
            c.env.DB,
            { ...suite, cases: [...suite.cases, added], now: new Date().toISOString() },
            suite.revision,
          ),
        ),
      );
      return saved(c, updated, 201);
    },
  )
  .post(
    "/:suiteId/runs",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "Run the suite against a draft revision or a version",
        description:
          "Each case runs `repeats` times in its own preview thread with its tool mocks in place of every tool; answered at once (202), followed with GET …/runs/:runId.",
        auth: "tenantKey",
        body: createRunRequest,
        response: { status: 202, schema: createdRunResponse },
        errors: [404, 412, 502, 503],
      }),
    ),
    async (c) => {
      const input = await readJson(c, createRunRequest);
      const { agent, suite } = await loadSuite(c);
      const runId = await startRun(c.env, c.req.url, agent, suite, input.target, input.repeats ?? 1);
      return c.json({ runId, status: "queued" as const }, 202);
    },
  )
  .get(
    "/:suiteId/runs",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "The suite's latest runs, newest first (without case results)",
        auth: "tenantKey",
        response: { status: 200, schema: runsList },
        errors: [404],
      }),
    ),
    async (c) => {
      const { agent, suite } = await loadSuite(c);
      const runs = await fromDatabase(listRuns(c.env.DB, agent.tenantId, agent.id, suite.id, RUNS_LISTED));
      return c.json({ items: runs.map(runSummary) });
    },
  )
  .get(
    "/:suiteId/runs/:runId",
    describeRoute(
      operation({
        tag: "Evals",
        summary: "An eval run: status, and per case whether it passed, what failed and what was seen",
        auth: "tenantKey",
        response: { status: 200, schema: runResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const run = await fromDatabase(getRun(c.env.DB, agent.tenantId, agent.id, c.req.param("runId")));
      if (run === null || run.suiteId !== c.req.param("suiteId")) throw errors.notFound("Eval run");
      return c.json(await runView(c.env, run));
    },
  );
