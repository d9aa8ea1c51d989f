// The AI SDK transport's approvals and client tools, with a real `AbstractChat` from `ai` and a fake socket playing
// the server: an approval becomes an `approval-requested` tool part, `addToolApprovalResponse` sends the decision and
// the continuation lands in the same message; a `tool_request` reaches `onToolCall` and `addToolOutput` answers it.
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from "ai";
import { describe, expect, it } from "vitest";
import {
  AgentThreadsChatTransport,
  entriesToUIMessages,
  type ThreadConnectionOptions,
} from "../../src/client/index";
import type { ServerFrame, WireEntry } from "../../src/shared/protocol";
import { type FakeSocket, fakeLaunch, fakeSockets } from "../helpers/fake-socket";
import { waitFor } from "../helpers/wait-for";

const at = "2030-01-01T00:00:00.000Z";

class PlainState implements ChatState<UIMessage> {
  status: ChatState<UIMessage>["status"] = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class TestChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, "messages">) {
    super({ ...init, state: new PlainState() });
  }
}

function entry(fields: Partial<WireEntry> & Pick<WireEntry, "id" | "kind">): WireEntry {
  return { parentId: null, role: null, runId: "run_1", text: "", createdAt: at, ...fields };
}

const refund = {
  approvalId: "apr_1",
  toolCallId: "call_1",
  name: "refund",
  input: { orderId: "o_9", amount: 40 },
  by: "any" as const,
  expiresAt: at,
  title: "Refund an order",
};

async function setUp(
  init: Omit<ChatInit<UIMessage>, "messages" | "transport">,
  fetch?: ThreadConnectionOptions["fetch"],
) {
  const fake = fakeSockets();
  const transport = new AgentThreadsChatTransport<UIMessage>({
    launch: fakeLaunch,
    WebSocket: fake.WebSocket,
    backoff: { initialMs: 1, maxMs: 1 },
    ...(fetch !== undefined ? { fetch } : {}),
  });
  const connecting = transport.connection.connect();
  fake.last().accept();
  await connecting;
  // Every request the chat makes, counted: an approval or a tool output must lead to exactly one more.
  const sendMessages = transport.sendMessages.bind(transport);
  const requests: string[] = [];
  transport.sendMessages = (options) => {
    requests.push(options.trigger);
    return sendMessages(options);
  };
  const chat = new TestChat({ ...init, transport });
  return { chat, transport, socket: fake.last(), requests };
}

/** The server's answer to the chat's first send: the user entry, then the run starts. */
async function acceptTurn(socket: FakeSocket): Promise<void> {
  const send = await waitFor(
    () => socket.sentOf("send"),
    (sent) => sent.length === 1,
    { what: "the send frame" },
  ).then((sent) => sent[0]);
  const frames: ServerFrame[] = [
    {
      type: "entry",
      entry: entry({
        id: "e_user",
        kind: "message",
        role: "user",
        text: send?.text ?? "",
        clientMessageId: send?.clientMessageId,
      }),
    },
    { type: "run", runId: "run_1", status: "running" },
  ];
  for (const frame of frames) socket.frame(frame);
}

/** The run goes on after the wait and ends with `text`, in two deltas numbered from `seq`. */
function continueWith(socket: FakeSocket, text: string, seq: number): void {
  const half = Math.floor(text.length / 2);
  socket.frame({ type: "run", runId: "run_1", status: "running" });
  socket.frame({ type: "delta", runId: "run_1", seq, text: text.slice(0, half) });
  socket.frame({ type: "delta", runId: "run_1", seq: seq + 1, text: text.slice(half) });
  socket.frame({
    type: "entry",
    entry: entry({
      id: "e_reply",
      kind: "message",
      role: "assistant",
      text,
      parentId: "e_user",
      status: "complete",
    }),
  });
  socket.frame({ type: "run", runId: "run_1", status: "succeeded" });
}

const partsOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => {
    if (part.type === "text") return `text:${part.text}`;
    if ("toolCallId" in part) return `${part.type}:${part.state}`;
    return part.type;
  });

describe("AI SDK transport: approvals", () => {
  it("shows an approval as an approval-requested tool part, sends the chat's decision, and streams the run on", async () => {
    const { chat, socket, transport, requests } = await setUp({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    const sending = chat.sendMessage({ text: "Refund order o_9." });
    await acceptTurn(socket);
    socket.frame({
      type: "entry",
      entry: entry({ id: "e_req", kind: "approval_request", parentId: "e_user", approval: refund }),
    });
    socket.frame({ type: "run", runId: "run_1", status: "requires_action", actions: [refund] });
    await sending;
    expect(chat.status).toBe("ready");
    const asked = chat.messages.at(-1);
    expect(asked?.id).toBe("run_1");
    expect(partsOf(asked)).toEqual(["step-start", "tool-refund:approval-requested"]);
    const part = asked?.parts[1];
    expect(part).toMatchObject({
      toolCallId: "call_1",
      input: { orderId: "o_9", amount: 40 },
      approval: { id: "apr_1", descriptor: { title: "Refund an order", by: "any", expiresAt: at } },
    });

    await chat.addToolApprovalResponse({ id: "apr_1", approved: true });
    await waitFor(
      () => socket.sentOf("approval"),
      (sent) => sent.length === 1,
      { what: "the approval frame" },
    );
    expect(socket.sentOf("approval")).toEqual([
      { type: "approval", approvalId: "apr_1", decision: "approve" },
    ]);
    socket.frame({
      type: "entry",
      entry: entry({
        id: "e_dec",
        kind: "approval_decision",
        parentId: "e_req",
        decision: { approvalId: "apr_1", decision: "approve", by: "user", reason: null },
      }),
    });
    continueWith(socket, "The refund tool returned: done.", 1);
    await waitFor(
      () => partsOf(chat.messages.at(-1)).at(-1),
      (last) => last === "text:The refund tool returned: done." && chat.status === "ready",
      { what: "the continuation in the same message" },
    );
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(partsOf(chat.messages.at(-1))).toEqual([
      "step-start",
      "tool-refund:approval-responded",
      "step-start",
      "text:The refund tool returned: done.",
    ]);
    expect(chat.messages.at(-1)?.metadata).toMatchObject({ entryId: "e_reply", status: "complete" });
    // Nothing is sent again: one user message, one decision, two requests of the chat.
    await settled(transport);
    expect(requests).toHaveLength(2);
    expect(socket.sentOf("send")).toHaveLength(1);
    expect(socket.sentOf("approval")).toHaveLength(1);
  });

  it("sends a denial with its reason, and the denied part says so", async () => {
    const { chat, socket } = await setUp({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    const sending = chat.sendMessage({ text: "Refund order o_9." });
    await acceptTurn(socket);
    socket.frame({ type: "run", runId: "run_1", status: "requires_action", actions: [refund] });
    await sending;
    await chat.addToolApprovalResponse({ id: "apr_1", approved: false, reason: "Not eligible." });
    await waitFor(
      () => socket.sentOf("approval"),
      (sent) => sent.length === 1,
      { what: "the denial" },
    );
    expect(socket.sentOf("approval")[0]).toEqual({
      type: "approval",
      approvalId: "apr_1",
      decision: "deny",
      reason: "Not eligible.",
    });
    socket.frame({
      type: "entry",
      entry: entry({
        id: "e_dec",
        kind: "approval_decision",
        decision: { approvalId: "apr_1", decision: "deny", by: "user", reason: "Not eligible." },
      }),
    });
    continueWith(socket, "I could not refund it.", 1);
    await waitFor(
      () => partsOf(chat.messages.at(-1)),
      (parts) => parts.includes("text:I could not refund it.") && chat.status === "ready",
      { what: "the continuation" },
    );
    expect(partsOf(chat.messages.at(-1))).toEqual([
      "step-start",
      "tool-refund:output-denied",
      "step-start",
      "text:I could not refund it.",
    ]);
  });

  it("ends the stream with an error when the server refuses the decision", async () => {
    const { chat, socket } = await setUp({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    const sending = chat.sendMessage({ text: "Refund order o_9." });
    await acceptTurn(socket);
    socket.frame({ type: "run", runId: "run_1", status: "requires_action", actions: [refund] });
    await sending;
    await chat.addToolApprovalResponse({ id: "apr_1", approved: true });
    await waitFor(
      () => socket.sentOf("approval"),
      (sent) => sent.length === 1,
      { what: "the approval frame" },
    );
    socket.frame({ type: "error", code: "conflict", message: "The approval expired." });
    await waitFor(
      () => chat.status,
      (status) => status === "error",
      { what: "the chat's error" },
    );
    expect(chat.error?.message).toBe("conflict: The approval expired.");
  });
});

describe("AI SDK transport: client tools", () => {
  it("runs onToolCall for a tool_request, sends addToolOutput's output once, and streams the run on", async () => {
    const calls: unknown[] = [];
    let chat: TestChat | undefined;
    const setup = await setUp({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => {
        calls.push(toolCall);
        void chat?.addToolOutput({
          tool: toolCall.toolName,
          toolCallId: toolCall.toolCallId,
          output: { city: "Lisbon" },
        });
      },
    });
    chat = setup.chat;
    const { socket, transport, requests } = setup;
    const sending = chat.sendMessage({ text: "Where am I?" });
    await acceptTurn(socket);
    socket.frame({ type: "run", runId: "run_1", status: "requires_action", actions: [] });
    socket.frame({
      type: "tool_request",
      runId: "run_1",
      toolCallId: "call_loc",
      name: "getLocation",
      input: { precise: true },
      expiresAt: at,
    });
    // The chat sends the output by itself once the stream ended (`sendMessage` resolves after that request too).
    await waitFor(
      () => socket.sentOf("tool_result"),
      (sent) => sent.length === 1,
      { what: "the tool result" },
    );
    expect(socket.sentOf("tool_result")).toEqual([
      { type: "tool_result", toolCallId: "call_loc", output: { city: "Lisbon" } },
    ]);
    expect(calls).toEqual([
      expect.objectContaining({ toolCallId: "call_loc", toolName: "getLocation", input: { precise: true } }),
    ]);
    continueWith(socket, "You are in Lisbon.", 1);
    await sending;
    await waitFor(
      () => partsOf(chat?.messages.at(-1)),
      (parts) => parts.includes("text:You are in Lisbon.") && chat?.status === "ready",
      { what: "the continuation" },
    );
    expect(partsOf(chat.messages.at(-1))).toEqual([
      "step-start",
      "tool-getLocation:output-available",
      "step-start",
      "text:You are in Lisbon.",
    ]);
    // A replay of the request (after a reconnect) neither runs onToolCall again nor sends a second answer.
    socket.frame({
      type: "tool_request",
      runId: "run_1",
      toolCallId: "call_loc",
      name: "getLocation",
      input: { precise: true },
      expiresAt: at,
    });
    await settled(transport);
    expect(requests).toHaveLength(2);
    expect(calls).toHaveLength(1);
    expect(socket.sentOf("tool_result")).toHaveLength(1);
  });
});

describe("AI SDK transport: a client tool that needs approval", () => {
  it("asks for the approval, then runs onToolCall once approved, then sends the output", async () => {
    const calls: string[] = [];
    let chat: TestChat | undefined;
    const setup = await setUp({
      sendAutomaticallyWhen: (o) =>
        lastAssistantMessageIsCompleteWithApprovalResponses(o) ||
        lastAssistantMessageIsCompleteWithToolCalls(o),
      onToolCall: ({ toolCall }) => {
        calls.push(toolCall.toolCallId);
        void chat?.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: "ok" });
      },
    });
    chat = setup.chat;
    const { socket, requests } = setup;
    const share = {
      ...refund,
      approvalId: "apr_s",
      toolCallId: "call_s",
      name: "share",
      title: "Share your screen",
    };
    const sending = chat.sendMessage({ text: "Show me." });
    await acceptTurn(socket);
    socket.frame({ type: "run", runId: "run_1", status: "requires_action", actions: [share] });
    await sending;
    expect(calls).toEqual([]);
    expect(partsOf(chat.messages.at(-1))).toEqual(["step-start", "tool-share:approval-requested"]);

    const deciding = chat.addToolApprovalResponse({ id: "apr_s", approved: true });
    await waitFor(
      () => socket.sentOf("approval"),
      (sent) => sent.length === 1,
      { what: "the approval" },
    );
    // Approved: the decision, then the request to the client (the run still waits).
    socket.frame({
      type: "entry",
      entry: entry({
        id: "e_dec",
        kind: "approval_decision",
        decision: { approvalId: "apr_s", decision: "approve", by: "user", reason: null },
      }),
    });
    socket.frame({
      type: "tool_request",
      runId: "run_1",
      toolCallId: "call_s",
      name: "share",
      input: {},
      expiresAt: at,
    });
    await deciding;
    await waitFor(
      () => socket.sentOf("tool_result"),
      (sent) => sent.length === 1,
      { what: "the tool's output" },
    );
    expect(calls).toEqual(["call_s"]);
    expect(socket.sentOf("tool_result")).toEqual([
      { type: "tool_result", toolCallId: "call_s", output: "ok" },
    ]);
    continueWith(socket, "Thanks for sharing.", 1);
    await waitFor(
      () => partsOf(chat?.messages.at(-1)),
      (parts) => parts.includes("text:Thanks for sharing.") && chat?.status === "ready",
      { what: "the continuation" },
    );
    expect(partsOf(chat.messages.at(-1))).toEqual([
      "step-start",
      "tool-share:output-available",
      "step-start",
      "text:Thanks for sharing.",
    ]);
    expect(requests).toHaveLength(3);
  });
});

describe("AI SDK transport: a stored branch", () => {
  it("loads a run's approval, decision and client tool as tool parts of its assistant message", () => {
    const entries: WireEntry[] = [
      entry({
        id: "e_user",
        kind: "message",
        role: "user",
        clientMessageId: "cm_user_0001",
        text: "Refund it.",
      }),
      entry({ id: "e_req", kind: "approval_request", parentId: "e_user", approval: refund }),
      entry({
        id: "e_dec",
        kind: "approval_decision",
        parentId: "e_req",
        decision: { approvalId: "apr_1", decision: "approve", by: "tenant", reason: "Fine." },
      }),
      entry({
        id: "e_tool",
        kind: "tool_request",
        parentId: "e_dec",
        toolRequest: { toolCallId: "call_2", name: "confirm", input: {}, expiresAt: at },
      }),
      entry({
        id: "e_reply",
        kind: "message",
        role: "assistant",
        parentId: "e_tool",
        text: "Done.",
        status: "complete",
      }),
    ];
    const messages = entriesToUIMessages(entries);
    expect(messages.map((m) => m.id)).toEqual(["cm_user_0001", "run_1"]);
    expect(partsOf(messages[1])).toEqual([
      "step-start",
      "tool-refund:approval-responded",
      "tool-confirm:output-available",
      "step-start",
      "text:Done.",
    ]);
    expect(messages[1]?.parts[1]).toMatchObject({
      approval: { id: "apr_1", approved: true, reason: "Fine." },
    });
    expect(messages[1]?.metadata).toMatchObject({ entryId: "e_reply", runId: "run_1", status: "complete" });
  });
});

describe("AI SDK transport: file parts", () => {
  it("uploads a user message's file parts with the launch token, and sends their ids with it", async () => {
    const uploads: { url: string; headers: Headers; body: Uint8Array }[] = [];
    const fetch: ThreadConnectionOptions["fetch"] = async (input, init) => {
      const body = new Uint8Array(await new Response(init?.body as BodyInit).arrayBuffer());
      uploads.push({ url: String(input), headers: new Headers(init?.headers), body });
      const id = `att_${String(uploads.length).padStart(26, "0")}`;
      const ref = { id, sha256: "0".repeat(64), mediaType: "image/png", size: body.length, name: "dot.png" };
      return new Response(JSON.stringify(ref), { status: 201 });
    };
    const { chat, socket } = await setUp({}, fetch);
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const dataUrl = `data:image/png;base64,${btoa(String.fromCharCode(...png))}`;
    const sending = chat.sendMessage({
      text: "What is in this picture?",
      files: [{ type: "file", mediaType: "image/png", filename: "dot ü.png", url: dataUrl }],
    });
    await acceptTurn(socket);
    continueWith(socket, "A dot.", 1);
    await sending;

    expect(uploads).toHaveLength(1);
    const [upload] = uploads;
    expect(upload?.url).toBe("http://thread.test/v1/threads/thr_1/attachments");
    expect(upload?.headers.get("authorization")).toBe("Bearer token");
    expect(upload?.headers.get("content-type")).toBe("image/png");
    expect(upload?.headers.get("x-attachment-name")).toBe("dot%20%C3%BC.png");
    expect([...(upload?.body ?? [])]).toEqual([...png]);
    const [send] = socket.sentOf("send");
    expect(send?.attachments).toEqual(["att_00000000000000000000000001"]);
  });

  it("throws the upload's refusal as an AgentThreadsError and sends nothing", async () => {
    const fetch: ThreadConnectionOptions["fetch"] = async () =>
      new Response(
        JSON.stringify({
          error: {
            code: "unsupported_media_type",
            reason: "type_mismatch",
            message: "not a PNG",
            requestId: "r",
          },
        }),
        { status: 415, headers: { "Content-Type": "application/json" } },
      );
    const { transport, socket } = await setUp({}, fetch);
    const refused = await transport.connection
      .uploadAttachment(new Blob(["hello"], { type: "image/png" }), { name: "fake.png" })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 415, code: "unsupported_media_type", reason: "type_mismatch" });
    expect(socket.sentOf("send")).toEqual([]);
  });
});

/** Two ping round trips: whatever the chat would send again by itself (a loop) has been sent by then. */
async function settled(transport: AgentThreadsChatTransport<UIMessage>): Promise<void> {
  await transport.connection.sync();
  await transport.connection.sync();
}
