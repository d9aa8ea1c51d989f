// An AI SDK `ChatTransport` over a thread connection: `Chat`/`useChat` from `ai` send, regenerate, edit and resume
// a thread, decide its approvals and answer its client tools; our frames become UI message chunks (types only from
// `ai`, nothing at run time).
import type { ChatTransport, UIMessage, UIMessageChunk } from "ai";
import type { ServerFrame } from "../shared/protocol";
import {
  type AgentThreadsMessageMetadata,
  type AgentThreadsUIMessage,
  entriesToUIMessages,
  messageIdOf,
} from "./ai-messages";
import { type LogItem, type RunLog, RunLogs } from "./ai-run-log";
import { ThreadConnection } from "./thread";
import { blobOfUrl } from "./thread-attachments";
import type { ThreadConnectionOptions } from "./thread-options";

export type { AgentThreadsMessageMetadata, AgentThreadsUIMessage } from "./ai-messages";
export { entriesToUIMessages } from "./ai-messages";

export type AgentThreadsChatTransportOptions = ThreadConnectionOptions | { connection: ThreadConnection };

/** `clientMessageId`'s alphabet: a UI message id that fits is used as it is, so a retry is the same message. */
const CLIENT_MESSAGE_ID = /^[A-Za-z0-9_-]{8,128}$/;

function textOf(message: UIMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function metadataOf(message: UIMessage | undefined): AgentThreadsMessageMetadata {
  return (message?.metadata ?? {}) as AgentThreadsMessageMetadata;
}

/** How a stream starts: at a new turn's run (bound by its first frame), or at a known run from a point of its log. */
type StreamStart =
  | { bind: (frame: ServerFrame) => string | undefined; start: () => void }
  | { runId: string; from: number; send?: () => string[] };

/**
 * `new Chat({ transport: new AgentThreadsChatTransport({ launch, refreshLaunch }) })`, or `useChat({ transport })`.
 *
 * - `submit-message` sends the last user message below the entry of the message before it (so the chat's view
 *   and the thread's tree agree); with `messageId` (a `sendMessage` that replaces a user message) it is an `edit`.
 * - A submit whose message is the assistant's (what `addToolApprovalResponse` and `addToolOutput` lead to, with
 *   `sendAutomaticallyWhen`) sends the approval decisions and tool outputs the chat added, and streams the run on.
 * - A new user message's `file` parts are uploaded first (`uploadAttachment`) and their ids sent with it
 *   (docs/client.md#attachments).
 * - `regenerate-message` regenerates the reply: a sibling branch, nothing is deleted.
 * - `reconnectToStream` replays the live run from its start (the server keeps its deltas), or answers null.
 * - A dropped socket reconnects by itself and resumes the run after its last delta: the stream goes on.
 * - `stop()` cancels the run; the text so far is kept as an `interrupted` entry.
 */
export class AgentThreadsChatTransport<UI_MESSAGE extends UIMessage = AgentThreadsUIMessage>
  implements ChatTransport<UI_MESSAGE>
{
  /** A resumed stream starts again at the reply's beginning. */
  readonly resumeStreamIsReplay = true;
  readonly connection: ThreadConnection;
  readonly #owned: boolean;
  /** UI message id → entry id, for messages whose metadata was not written back (or was dropped by the chat). */
  readonly #entryIds = new Map<string, string>();
  /** Every run heard of, as the chat should see it: a turn binds to the first run it had not heard of. */
  readonly #runs = new RunLogs();
  /** Approvals decided and tool calls answered through this transport. */
  readonly #sent = new Set<string>();
  /** File parts already uploaded, by URL: a retried submit sends the same attachments again. */
  readonly #uploads = new Map<string, Promise<string>>();

  constructor(options: AgentThreadsChatTransportOptions) {
    this.#owned = !("connection" in options);
    this.connection = "connection" in options ? options.connection : new ThreadConnection(options);
    this.connection.on("*", (frame) => this.#remember(frame));
  }

  /** The thread's current branch as UI messages: the `messages` to start a `Chat` with. */
  async loadMessages(): Promise<UI_MESSAGE[]> {
    await this.connection.connect();
    const entries = await this.connection.branch();
    for (const entry of entries) {
      if (entry.kind === "message") this.#entryIds.set(messageIdOf(entry), entry.id);
      if (entry.runId === null) continue;
      const run = this.#runs.get(entry.runId);
      run.observeEntry(entry);
      // The loaded messages show it all: a continuation starts after it.
      run.shown = run.items.length;
    }
    return entriesToUIMessages(entries) as unknown as UI_MESSAGE[];
  }

  async sendMessages(options: {
    trigger: "submit-message" | "regenerate-message";
    chatId: string;
    messageId: string | undefined;
    messages: UI_MESSAGE[];
    abortSignal: AbortSignal | undefined;
  }): Promise<ReadableStream<UIMessageChunk>> {
    const { trigger, messageId, messages, abortSignal } = options;
    await this.connection.connect();
    const index =
      messageId !== undefined ? messages.findIndex((m) => m.id === messageId) : messages.length - 1;
    const target = messages[index];
    if (trigger === "submit-message" && target?.role === "assistant") {
      const runId = metadataOf(target).runId ?? target.id;
      const run = this.#runs.get(runId);
      return this.#stream(abortSignal, { runId, from: run.shown, send: () => this.#answer(run, target) });
    }
    const known = new Set(this.#runs.ids());
    // A new user message's file parts are uploaded first and go with it (an edit takes text only).
    const attachments =
      trigger === "submit-message" && target?.role === "user" && messageId === undefined
        ? await this.#upload(target)
        : [];
    let clientMessageId: string | undefined;
    let userMessageId: string | undefined;
    const start = (): void => {
      if (trigger === "regenerate-message") {
        const lastUser = [...messages].reverse().find((m) => m.role === "user");
        const entryId =
          (messageId !== undefined ? this.#entryIds.get(messageId) : undefined) ?? this.#entryIdOf(lastUser);
        if (entryId === undefined)
          throw new Error("Nothing to regenerate: the message has no stored entry yet.");
        this.connection.regenerate(entryId);
        return;
      }
      if (target === undefined || target.role !== "user")
        throw new Error("The last message is not a user message.");
      userMessageId = target.id;
      const text = textOf(target);
      const original = messageId !== undefined ? this.#entryIdOf(target) : undefined;
      if (original !== undefined) {
        clientMessageId = this.connection.edit(original, text);
        return;
      }
      const parentId = index > 0 ? this.#entryIdOf(messages[index - 1]) : undefined;
      clientMessageId = this.connection.send({
        text,
        attachments,
        ...(CLIENT_MESSAGE_ID.test(target.id) ? { clientMessageId: target.id } : {}),
        ...(parentId !== undefined ? { parentId } : {}),
      });
    };
    const bind = (frame: ServerFrame): string | undefined => {
      if (
        frame.type === "entry" &&
        frame.entry.role === "user" &&
        frame.entry.clientMessageId === clientMessageId
      ) {
        if (userMessageId !== undefined) this.#entryIds.set(userMessageId, frame.entry.id);
        return frame.entry.runId ?? undefined;
      }
      if (frame.type === "run" && (frame.status === "queued" || frame.status === "running")) {
        if (!known.has(frame.runId)) return frame.runId;
      }
      return undefined;
    };
    return this.#stream(abortSignal, { bind, start });
  }

  async reconnectToStream(options: {
    chatId: string;
    abortSignal?: AbortSignal;
  }): Promise<ReadableStream<UIMessageChunk> | null> {
    await this.connection.sync();
    const live = this.connection.liveRun;
    if (live === null || options.abortSignal?.aborted) return null;
    return this.#stream(options.abortSignal, { runId: live.runId, from: 0 });
  }

  /** Closes the connection this transport opened (one given to it stays open). */
  close(): void {
    if (this.#owned) this.connection.close();
  }

  /** Uploads each `file` part (a `data:` or `blob:` URL, or any URL `fetch` reads) once: the attachments' ids. */
  #upload(message: UIMessage): Promise<string[]> {
    const files = message.parts.filter((part) => part.type === "file");
    return Promise.all(
      files.map((part) => {
        let id = this.#uploads.get(part.url);
        if (id === undefined) {
          id = blobOfUrl(part.url, part.mediaType)
            .then((blob) => this.connection.uploadAttachment(blob, { name: part.filename ?? "file" }))
            .then((ref) => ref.id);
          id.catch(() => this.#uploads.delete(part.url));
          this.#uploads.set(part.url, id);
        }
        return id;
      }),
    );
  }

  #entryIdOf(message: UIMessage | undefined): string | undefined {
    if (message === undefined) return undefined;
    return metadataOf(message).entryId ?? this.#entryIds.get(message.id);
  }

  #remember(frame: ServerFrame): void {
    this.#runs.observe(frame);
    // Only messages name a message's entry: a waiting run's action entries are not its reply.
    if (frame.type === "entry" && frame.entry.kind === "message")
      this.#entryIds.set(messageIdOf(frame.entry), frame.entry.id);
  }

  /**
   * What the chat added to the run's message since it was shown: approval responses become `approval` frames, tool
   * outputs `tool_result` frames (each once). Answers the approvals decided: a refusal of one ends the stream, while
   * a refused output still counts as the call's answer and the run goes on (docs/tools.md#client-tools).
   */
  #answer(run: RunLog, message: UIMessage): string[] {
    const sent: string[] = [];
    for (const part of message.parts) {
      if (!("toolCallId" in part)) continue;
      const call = run.calls.get(part.toolCallId);
      if (call === undefined) continue;
      if (part.state === "approval-responded" && call.approval !== undefined && !call.decided) {
        const { approvalId } = call.approval;
        if (this.#sent.has(approvalId)) continue;
        this.#sent.add(approvalId);
        sent.push(approvalId);
        this.connection.decide(approvalId, part.approval.approved ? "approve" : "deny", part.approval.reason);
      } else if ((part.state === "output-available" || part.state === "output-error") && call.client) {
        const key = `${run.runId} ${call.toolCallId}`;
        if (this.#sent.has(key) || (part.state === "output-available" && part.preliminary === true)) continue;
        this.#sent.add(key);
        this.connection.sendToolResult(
          call.toolCallId,
          part.state === "output-error" ? { error: part.errorText } : { output: part.output },
        );
      }
    }
    return sent;
  }

  /**
   * The chunks of one run for the chat: `start` (message id = run id), then the run's log from where the chat has it
   * (text parts, tool calls, approval requests and decisions, steps, the sealed entry as metadata), then `finish`
   * (`stop` when it succeeded, `other` when aborted, `tool-calls` while it waits for the chat's decisions or tool
   * outputs) or `error` (failed, refused, connection closed for good).
   */
  #stream(abortSignal: AbortSignal | undefined, how: StreamStart): ReadableStream<UIMessageChunk> {
    const connection = this.connection;
    let cleanup = (): void => {};
    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        let run: RunLog | undefined;
        let cursor = 0;
        let textId: string | undefined;
        let texts = 0;
        let done = false;
        /** Decisions this stream sent, until the server stores them (or refuses one). */
        let awaiting = new Set<string>();
        let syncing = false;
        const enqueue = (chunk: UIMessageChunk): void => controller.enqueue(chunk);
        const closeText = (): void => {
          if (textId !== undefined) enqueue({ type: "text-end", id: textId });
          textId = undefined;
        };
        const emit = (item: LogItem): void => {
          if (item.kind === "text") {
            if (textId === undefined) {
              textId = `${run?.runId}-text-${run?.items.length}-${++texts}`;
              enqueue({ type: "text-start", id: textId });
            }
            enqueue({ type: "text-delta", id: textId, delta: item.delta });
            return;
          }
          closeText();
          enqueue(item.chunk);
        };
        const flush = (): void => {
          if (run === undefined) return;
          for (; cursor < run.items.length; cursor++) emit(run.items[cursor] as LogItem);
          run.shown = Math.max(run.shown, cursor);
        };
        const finish = (last: UIMessageChunk[]): void => {
          if (done) return;
          flush();
          closeText();
          done = true;
          for (const chunk of last) enqueue(chunk);
          cleanup();
          controller.close();
        };
        /**
         * The run waits for the chat (a decision, a client tool's output): this stream ends and the chat answers. A run
         * with every call decided or answered is about to go on, and the stream stays for it.
         */
        const waitsForChat = (): boolean => {
          if (run?.status !== "requires_action" || awaiting.size > 0) return false;
          const runId = run.runId;
          return (
            run.undecided.length > 0 ||
            connection.pendingToolRequests.some((request) => request.runId === runId)
          );
        };
        const settle = (): void => {
          if (done || run === undefined) return;
          flush();
          const status = run.status;
          if (status === "succeeded") finish([{ type: "finish", finishReason: "stop" }]);
          else if (status === "aborted") finish([{ type: "finish", finishReason: "other" }]);
          else if (status === "failed") {
            const error = run.error;
            finish([{ type: "error", errorText: error ? `${error.code}: ${error.message}` : "failed" }]);
          } else if (waitsForChat()) {
            // Frames sent together with the park (each call's tool_request) arrive before the pong.
            if (syncing) return;
            syncing = true;
            void connection.sync().then(
              () => {
                syncing = false;
                if (waitsForChat()) finish([{ type: "finish", finishReason: "tool-calls" }]);
              },
              () => {},
            );
          }
        };
        const open = (runId: string, from: number): void => {
          run = this.#runs.get(runId);
          cursor = from;
          enqueue({ type: "start", messageId: runId, messageMetadata: { runId } });
        };
        const onFrame = (frame: ServerFrame): void => {
          if (done) return;
          if (run === undefined) {
            if (frame.type === "error") {
              finish([{ type: "error", errorText: `${frame.code}: ${frame.message}` }]);
              return;
            }
            const bound = "bind" in how ? how.bind(frame) : undefined;
            if (bound === undefined) return;
            open(bound, 0);
          }
          if (frame.type === "error" && awaiting.size > 0) {
            // The server refused a decision (already decided, expired, not the user's to make).
            finish([{ type: "error", errorText: `${frame.code}: ${frame.message}` }]);
            return;
          }
          if (frame.type === "entry" && frame.entry.decision !== undefined)
            awaiting.delete(frame.entry.decision.approvalId);
          // The run moved (went on, waits again, ended): whatever was sent was settled.
          if (frame.type === "run" && frame.runId === run?.runId) awaiting.clear();
          settle();
        };
        const offFrame = connection.on("*", onFrame);
        const offStatus = connection.onStatus((status, close) => {
          if (status === "closed")
            finish([{ type: "error", errorText: `connection closed (${close?.code ?? 1000})` }]);
        });
        const onAbort = (): void => {
          if (run !== undefined && !run.ended && connection.status !== "closed") connection.cancel(run.runId);
          done = true;
          cleanup();
        };
        abortSignal?.addEventListener("abort", onAbort, { once: true });
        cleanup = () => {
          offFrame();
          offStatus();
          abortSignal?.removeEventListener("abort", onAbort);
        };
        try {
          if ("bind" in how) how.start();
          else {
            open(how.runId, how.from);
            awaiting = new Set(how.send?.() ?? []);
            settle();
          }
        } catch (error) {
          cleanup();
          throw error;
        }
      },
      cancel: () => cleanup(),
    });
  }
}
