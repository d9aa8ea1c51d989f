// Attacks on the thread wire found by review: SDK transports picked by query string, oversized SDK-shaped frames,
// an undecodable run id. Each must be refused without an SDK answer and without storing anything.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { API } from "../helpers/tenants";
import { clientMessageId, launch, liveAgent, ORIGIN, upgradeRequest } from "../helpers/threads";

/** A raw socket that keeps every message as text, whatever its shape (SDK frames included). */
async function rawSocket(threadId: string, token: string, query = "") {
  const res = await upgradeRequest(threadId, { token, query });
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const messages: string[] = [];
  let closed: { code: number } | null = null;
  let wake = () => {};
  ws.addEventListener("message", (event) => {
    messages.push(String(event.data));
    wake();
  });
  ws.addEventListener("close", (event) => {
    closed = { code: event.code };
    wake();
  });
  /** Waits until `done` holds over what arrived (each message or close re-checks it). */
  const until = async (done: () => boolean, what: string) => {
    const deadline = Date.now() + 5000;
    while (!done()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; saw ${messages.join(" | ")}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  const typed = (type: string) => messages.map((m) => JSON.parse(m)).filter((f) => f?.type === type);
  return { ws, messages, closed: () => closed, until, typed };
}

async function branchLength(session: { threadId: string; token: string }): Promise<number> {
  const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/entries`, {
    headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: unknown[] }).items.length;
}

describe("the thread wire refuses what the SDK would otherwise act on", () => {
  it("ignores a client's choice of the SDK's Cap'n Web transport: SDK RPC frames get our error, not an answer", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const socket = await rawSocket(session.threadId, session.token, "?__agents_transport=capnweb");
    socket.ws.send(JSON.stringify({ type: "rpc", id: "1", method: "drainOutbox", args: [] }));
    socket.ws.send(JSON.stringify({ type: "ping" }));
    await socket.until(() => socket.typed("pong").length === 1, "pong");
    expect(socket.typed("error")).toEqual([expect.objectContaining({ code: "bad_request" })]);
    expect(socket.messages.join("\n")).not.toMatch(/callable|"rpc"|"success"/);
    expect(socket.closed()).toBeNull();
  });

  it("ignores a client-chosen connection id: a 300-character _pk opens a normal socket, no stack trace, no 1011", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const socket = await rawSocket(session.threadId, session.token, `?_pk=${"a".repeat(300)}`);
    socket.ws.send(JSON.stringify({ type: "hello", protocol: 1 }));
    await socket.until(() => socket.typed("ready").length === 1, "ready");
    expect(socket.messages.every((m) => typeof JSON.parse(m).type === "string")).toBe(true);
    expect(socket.closed()).toBeNull();
  });

  it("closes 1009 on an oversized SDK-shaped frame before the SDK sees it, and stores nothing", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const socket = await rawSocket(session.threadId, session.token);
    const padding = "x".repeat(900 * 1024);
    socket.ws.send(JSON.stringify({ type: "rpc", id: "1", method: "drainOutbox", args: [], padding }));
    await socket.until(() => socket.closed() !== null, "the close");
    expect(socket.closed()).toEqual({ code: 1009 });
    expect(socket.messages).toEqual([]);
    expect(await branchLength(session)).toBe(0);
  });

  it("closes 1009 on an oversized binary frame", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const socket = await rawSocket(session.threadId, session.token);
    socket.ws.send(new Uint8Array(70_000));
    await socket.until(() => socket.closed() !== null, "the close");
    expect(socket.closed()).toEqual({ code: 1009 });
    expect(socket.messages).toEqual([]);
  });
});

describe("thread HTTP paths that cannot be decoded", () => {
  it("answers a run id that is not valid percent-encoding with 400, not 500", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/runs/%ZZ/cancel`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("bad_request");
  });

  it("still cancels nothing it cannot find: a well-formed unknown run id is 404", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const res = await exports.default.fetch(
      `${API}/v1/threads/${session.threadId}/runs/run_${clientMessageId()}/cancel`,
      {
        method: "POST",
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      },
    );
    expect(res.status).toBe(404);
  });
});
