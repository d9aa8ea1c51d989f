// GET /v1/sessions/:threadId/export: the whole thread from its object, as JSON, for the owning tenant only.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { threadExportSchema } from "../../src/storage/thread/thread-export";
import { converse, launchFor, threadEntries, threadStub } from "../helpers/projection";
import { api, createApiKey, expectError, json } from "../helpers/tenants";
import { liveAgent } from "../helpers/threads";

describe("GET /v1/sessions/:threadId/export", () => {
  it("returns every entry, run, usage turn and the pin, also to a read-only key", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["first question", "second question"]);
    const stub = await threadStub(agent, session.threadId);
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");

    const res = await api(`/v1/sessions/${session.threadId}/export`, { key: reader.apiKey });
    expect(res.headers.get("Content-Disposition")).toContain(`thread-${session.threadId}.json`);
    const exported = await json(res, 200, threadExportSchema);
    const entries = await threadEntries(stub);
    expect(exported.entries.map((e) => [e.seq, e.id, e.parentId, e.kind, e.role, e.runId])).toEqual(
      entries.map((e) => [e.seq, e.id, e.parent_id, e.kind, e.role, e.run_id]),
    );
    expect(exported.entries[0]?.body).toMatchObject({ text: "first question" });
    expect(exported).toMatchObject({
      threadId: session.threadId,
      tenantId: agent.tenantId,
      environment: "development",
      agent: { id: agent.agentId, name: "Support", version: 1 },
      activeLeafId: entries.at(-1)?.id,
    });

    const version = await json(
      await api(`/v1/agents/${agent.agentId}/versions/1`, { key: agent.apiKey }),
      200,
      z.object({ versionId: z.string(), digest: z.string() }).passthrough(),
    );
    expect(exported.agent).toMatchObject({ versionId: version.versionId, digest: version.digest });

    expect(exported.runs.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    expect(exported.runs[0]).toMatchObject({ userEntryId: entries[0]?.id, assistantEntryId: entries[1]?.id });
    const sum = (key: "inputTokens" | "outputTokens") => exported.usage.turns.reduce((n, t) => n + t[key], 0);
    expect(exported.usage.totals).toEqual({
      turns: exported.usage.turns.length,
      inputTokens: sum("inputTokens"),
      outputTokens: sum("outputTokens"),
    });
    expect(exported.usage.byRun.map((r) => r.runId).sort()).toEqual(exported.runs.map((r) => r.id).sort());
  });

  it("is 404 for another tenant's thread, an unknown thread, and a thread with no conversation yet", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["mine"]);
    await expectError(
      await api(`/v1/sessions/${session.threadId}/export`, { key: other.apiKey }),
      404,
      "not_found",
    );
    await expectError(await api("/v1/sessions/thr_missing/export", { key: agent.apiKey }), 404, "not_found");
    const silent = await launchFor(agent, "user-2");
    await expectError(
      await api(`/v1/sessions/${silent.threadId}/export`, { key: agent.apiKey }),
      404,
      "not_found",
    );
  });
});
