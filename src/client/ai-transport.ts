// An AI SDK `ChatTransport` over a thread connection: `Chat`/`useChat` from `ai` send, regenerate, edit and resume
// a thread; our `run`, `delta` and `entry` frames become UI message chunks (types only from `ai`, nothing at run time).
import type { ChatTransport, UIMessage, UIMessageChunk } from "ai";
import type { ServerFrame, WireEntry } from "../shared/protocol";
import { ThreadConnection } from "./thread";
import type { ThreadConnectionOptions } from "./thread-options";

/** What each UI message carries about the thread entry behind it. */
export interface AgentThreadsMessageMetadata {
  /** The stored entry (absent on an assistant message until its reply is sealed). */
  entryId?: string;
  parentId?: string | null;
  /** The run that wrote (or writes) an assistant message. */
  runId?: string;
  /** How the reply ended: `complete`, `interrupted` or `failed`. */
  status?: "complete" | "interrupted" | "failed";
  /** A person's reply in handoff (`role: "human_agent"`), shown as an assistant message. */
  authorName?: string;
}

export type AgentThreadsUIMessage = UIMessage<AgentThreadsMessageMetadata>;

export type AgentThreadsChatTransportOptions = ThreadConnectionOptions | { connection: ThreadConnection };

/** `clientMessageId`'s alphabet: a UI message id that fits is used as it is, so a retry is the same message. */
const CLIENT_MESSAGE_ID = /^[A-Za-z0-9_-]{8,128}$/;

const ids = {
  /** A user message is named by its `clientMessageId`, an assistant message by its run (known before its entry). */
  of(entry: WireEntry): string {
    if (entry.role === "user") return entry.clientMessageId ?? entry.id;
    return entry.runId ?? entry.id;
  },
};

function textOf(message: UIMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function metadataOf(message: UIMessage | undefined): AgentThreadsMessageMetadata {
  return (message?.metadata ?? {}) as AgentThreadsMessageMetadata;
}

function entryMetadata(entry: WireEntry): AgentThreadsMessageMetadata {
  return {
    entryId: entry.id,
    parentId: entry.parentId,
    ...(entry.runId !== null ? { runId: entry.runId } : {}),
    ...(entry.status !== undefined ? { status: entry.status } : {}),
    ...(entry.authorName !== undefined ? { authorName: entry.authorName } : {}),
  };
}

/** UI messages for a branch of entries (user, assistant and a person's replies; event entries are left out). */
export function entriesToUIMessages(entries: WireEntry[]): AgentThreadsUIMessage[] {
  return entries
    .filter((entry) => entry.kind === "message" && entry.role !== null && entry.role !== "system")
    .filter((entry) => entry.role === "user" || entry.role === "assistant" || entry.role === "human_agent")
    .map((entry) => ({
      id: ids.of(entry),
      role: entry.role === "user" ? "user" : "assistant",
      metadata: entryMetadata(entry),
      parts: [{ type: "text", text: entry.text, state: "done" }],
    }));
}

/**
 * `new Chat({ transport: new AgentThreadsChatTransport({ launch, refreshLaunch }) })`, or `useChat({ transport })`.
 *
 * - `submit-message` sends the last user message below the entry of the message before it (so the chat's view
 *   and the thread's tree agree); with `messageId` (a `sendMessage` that replaces a user message) it is an `edit`.
 * - `regenerate-message` regenerates the reply: a sibling branch, nothing is deleted.
 * - `reconnectToStream` replays the live run from its first delta (the server stores them), or answers null.
 * - A dropped socket reconnects by itself and resumes the run after its last delta: the stream goes on.
 * - `stop()` cancels the run; the text so far is kept as an `interrupted` entry.
 */
export class AgentThreadsChatTransport<UI_MESSAGE extends UIMessage = AgentThreadsUIMessage>
  implements ChatTransport<UI_MESSAGE>
{
  /** A resumed stream starts again at the reply's first delta. */
  readonly resumeStreamIsReplay = true;
  readonly connection: ThreadConnection;
  readonly #owned: boolean;
  /** UI message id → entry id, for messages whose metadata was not written back (or was dropped by the chat). */
  readonly #entryIds = new Map<string, string>();
  /** Runs this transport has heard of: a turn binds to the first run it had not. */
  readonly #knownRuns = new Set<string>();

  constructor(options: AgentThreadsChatTransportOptions) {
    this.#owned = !("connection" in options);
    this.connection = "connection" in options ? options.connection : new ThreadConnection(options);
    this.connection.on("*", (frame) => this.#remember(frame));
  }

  /** The thread's current branch as UI messages: the `messages` to start a `Chat` with. */
  async loadMessages(): Promise<UI_MESSAGE[]> {
    await this.connection.connect();
    const entries = await this.connection.branch();
    for (const entry of entries) this.#entryIds.set(ids.of(entry), entry.id);
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
    const known = new Set(this.#knownRuns);
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
      const index =
        messageId !== undefined ? messages.findIndex((m) => m.id === messageId) : messages.length - 1;
      const user = messages[index];
      if (user === undefined || user.role !== "user")
        throw new Error("The last message is not a user message.");
      userMessageId = user.id;
      const text = textOf(user);
      const original = messageId !== undefined ? this.#entryIdOf(user) : undefined;
      if (original !== undefined) {
        clientMessageId = this.connection.edit(original, text);
        return;
      }
      const parentId = index > 0 ? this.#entryIdOf(messages[index - 1]) : undefined;
      clientMessageId = this.connection.send({
        text,
        ...(CLIENT_MESSAGE_ID.test(user.id) ? { clientMessageId: user.id } : {}),
        ...(parentId !== undefined ? { parentId } : {}),
      });
    };
    return this.#stream({
      abortSignal,
      start,
      bind: (frame) => {
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
      },
    });
  }

  async reconnectToStream(options: {
    chatId: string;
    abortSignal?: AbortSignal;
  }): Promise<ReadableStream<UIMessageChunk> | null> {
    await this.connection.sync();
    const live = this.connection.liveRun;
    if (live === null || options.abortSignal?.aborted) return null;
    return this.#stream({ abortSignal: options.abortSignal, runId: live.runId, replay: live.text });
  }

  /** Closes the connection this transport opened (one given to it stays open). */
  close(): void {
    if (this.#owned) this.connection.close();
  }

  #entryIdOf(message: UIMessage | undefined): string | undefined {
    if (message === undefined) return undefined;
    return metadataOf(message).entryId ?? this.#entryIds.get(message.id);
  }

  #remember(frame: ServerFrame): void {
    if (frame.type === "run") this.#knownRuns.add(frame.runId);
    if (frame.type === "delta") this.#knownRuns.add(frame.runId);
    if (frame.type === "entry") this.#entryIds.set(ids.of(frame.entry), frame.entry.id);
  }

  /**
   * The chunks of one run: `start` (message id = run id), one text part of its deltas, the sealed entry as message
   * metadata, then `finish` (succeeded, aborted) or `error` (failed, refused, connection closed for good).
   */
  #stream(input: {
    abortSignal: AbortSignal | undefined;
    start?: () => void;
    bind?: (frame: ServerFrame) => string | undefined;
    runId?: string;
    replay?: string;
  }): ReadableStream<UIMessageChunk> {
    const connection = this.connection;
    let cleanup = (): void => {};
    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        let runId: string | undefined;
        let streamed = "";
        let entry: WireEntry | undefined;
        let done = false;
        const finish = (last: UIMessageChunk[]): void => {
          if (done) return;
          done = true;
          for (const chunk of last) controller.enqueue(chunk);
          cleanup();
          controller.close();
        };
        const open = (id: string, replay: string): void => {
          runId = id;
          this.#knownRuns.add(id);
          controller.enqueue({ type: "start", messageId: id, messageMetadata: { runId: id } });
          controller.enqueue({ type: "text-start", id });
          if (replay !== "") {
            streamed = replay;
            controller.enqueue({ type: "text-delta", id, delta: replay });
          }
        };
        const sealed = (id: string): UIMessageChunk[] => {
          const chunks: UIMessageChunk[] = [];
          // The stored entry is the authority: what the stream missed of it (nothing, normally) is added.
          if (entry?.text.startsWith(streamed) && entry.text.length > streamed.length) {
            chunks.push({ type: "text-delta", id, delta: entry.text.slice(streamed.length) });
          }
          chunks.push({ type: "text-end", id });
          if (entry !== undefined)
            chunks.push({ type: "message-metadata", messageMetadata: entryMetadata(entry) });
          return chunks;
        };
        const onFrame = (frame: ServerFrame): void => {
          if (done) return;
          if (runId === undefined) {
            if (frame.type === "error") {
              finish([{ type: "error", errorText: `${frame.code}: ${frame.message}` }]);
              return;
            }
            const bound = input.bind?.(frame);
            if (bound === undefined) return;
            open(bound, "");
          }
          const id = runId as string;
          if (frame.type === "delta" && frame.runId === id) {
            streamed += frame.text;
            controller.enqueue({ type: "text-delta", id, delta: frame.text });
          } else if (frame.type === "entry" && frame.entry.role === "assistant" && frame.entry.runId === id) {
            entry = frame.entry;
          } else if (frame.type === "run" && frame.runId === id) {
            if (frame.status === "succeeded")
              finish([...sealed(id), { type: "finish", finishReason: "stop" }]);
            else if (frame.status === "aborted")
              finish([...sealed(id), { type: "finish", finishReason: "other" }]);
            else if (frame.status === "failed") {
              const error = frame.error;
              finish([
                ...sealed(id),
                { type: "error", errorText: error ? `${error.code}: ${error.message}` : "failed" },
              ]);
            }
          }
        };
        const offFrame = connection.on("*", onFrame);
        const offStatus = connection.onStatus((status, close) => {
          if (status === "closed")
            finish([{ type: "error", errorText: `connection closed (${close?.code ?? 1000})` }]);
        });
        const onAbort = (): void => {
          if (runId !== undefined && connection.status !== "closed") connection.cancel(runId);
          done = true;
          cleanup();
        };
        input.abortSignal?.addEventListener("abort", onAbort, { once: true });
        cleanup = () => {
          offFrame();
          offStatus();
          input.abortSignal?.removeEventListener("abort", onAbort);
        };
        if (input.runId !== undefined) open(input.runId, input.replay ?? "");
        try {
          input.start?.();
        } catch (error) {
          cleanup();
          throw error;
        }
      },
      cancel: () => cleanup(),
    });
  }
}
