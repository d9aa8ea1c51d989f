// One structured JSON log line per turn (docs/operations.md), naming the Worker request that started it and no content.
import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { z } from "zod";
import { API, api, json } from "../helpers/tenants";
import { clientMessageId, FrameReader, launch, liveAgent, ORIGIN } from "../helpers/threads";

const turnLine = z.strictObject({
  level: z.literal("info"),
  message: z.literal("turn"),
  tenantId: z.string(),
  threadId: z.string(),
  runId: z.string(),
  requestId: z.string().nullable(),
  provider: z.string(),
  model: z.string(),
  firstDeltaMs: z.number().int().min(0).nullable(),
  durationMs: z.number().int().min(0).nullable(),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  status: z.enum(["queued", "running", "succeeded", "failed", "aborted"]),
  errorCode: z.string().nullable(),
  errorReason: z.string().nullable(),
});

let logged: MockInstance<typeof console.log>;

beforeEach(() => {
  logged = vi.spyOn(console, "log");
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The raw text and parsed form of every turn line logged so far for one run. */
function turnLines(runId: string) {
  return logged.mock.calls
    .map(([first]) => (typeof first === "string" ? first : ""))
    .filter((text) => text.includes('"message":"turn"'))
    .map((text) => ({ text, line: turnLine.parse(JSON.parse(text)) }))
    .filter(({ line }) => line.runId === runId);
}

const replySchema = z.object({ run: z.object({ id: z.string(), status: z.string() }) });

function postMessage(session: { threadId: string; token: string }, text: string, accept?: string) {
  return api(`/v1/threads/${session.threadId}/messages`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${session.token}`,
      Origin: ORIGIN,
      ...(accept !== undefined ? { Accept: accept } : {}),
    },
    body: { clientMessageId: clientMessageId(), text },
  });
}

describe("the per-turn log line", () => {
  it("is written once for a JSON message, with the response's request id, the model, timings and tokens", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const secretText = `private words ${crypto.randomUUID()}`;
    const res = await postMessage(session, secretText);
    const requestId = res.headers.get("X-Request-Id");
    const reply = await json(res, 201, replySchema);

    const lines = turnLines(reply.run.id);
    expect(lines).toHaveLength(1);
    const { text, line } = lines[0]!;
    expect(line).toMatchObject({
      tenantId: agent.tenantId,
      threadId: session.threadId,
      runId: reply.run.id,
      requestId,
      provider: "local",
      model: "echo",
      status: "succeeded",
      errorCode: null,
      errorReason: null,
    });
    expect(line.firstDeltaMs).not.toBeNull();
    expect(line.durationMs).not.toBeNull();
    expect(line.durationMs!).toBeGreaterThanOrEqual(line.firstDeltaMs!);
    expect(line.inputTokens + line.outputTokens).toBeGreaterThan(0);
    for (const secret of [secretText, "Echo:", session.token, agent.apiKey, agent.publicKey]) {
      expect(text).not.toContain(secret);
    }
  });

  it("names the failure's code for a failed turn, and the SSE request's id", async () => {
    const agent = await liveAgent({
      artifact: { model: { provider: "local", model: "echo", local: { chunks: 3, failAfterChunks: 1 } } },
    });
    const session = await launch(agent.publicKey);
    const res = await postMessage(session, "this one fails", "text/event-stream");
    const requestId = res.headers.get("X-Request-Id");
    const stream = await res.text();
    const runId = /"runId":"([^"]+)"/.exec(stream)?.[1];
    expect(stream).toContain('"status":"failed"');

    const lines = turnLines(runId!);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.line).toMatchObject({
      requestId,
      status: "failed",
      errorCode: "upstream_unavailable",
      errorReason: "other",
    });
    expect(lines[0]!.line.firstDeltaMs).not.toBeNull();
  });

  it("carries the WebSocket upgrade's request id for every turn sent on that socket", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const upgrade = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/ws`, {
      headers: {
        Upgrade: "websocket",
        "Sec-WebSocket-Protocol": `agent.v1, bearer.${session.token}`,
        Origin: ORIGIN,
      },
    });
    expect(upgrade.status).toBe(101);
    const requestId = upgrade.headers.get("X-Request-Id");
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const ws = upgrade.webSocket!;
    ws.accept();
    const reader = new FrameReader(ws);
    reader.send({ type: "hello", protocol: 1 });
    await reader.next("ready");

    const runIds: string[] = [];
    for (const text of ["first", "second"]) {
      reader.send({ type: "send", clientMessageId: clientMessageId(), text });
      runIds.push((await reader.next("run", (f) => f.status === "succeeded")).runId);
    }
    expect(new Set(runIds).size).toBe(2);
    for (const runId of runIds) {
      const lines = turnLines(runId);
      expect(lines).toHaveLength(1);
      expect(lines[0]!.line).toMatchObject({ requestId, threadId: session.threadId, status: "succeeded" });
    }
    ws.close(1000, "done");
  });
});
