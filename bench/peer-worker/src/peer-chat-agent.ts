// The peer baseline for B2: a chat turn as a user of the Cloudflare `agents` SDK builds it with `AIChatAgent` and AI
// SDK `streamText`, over the product's own local model (src/models/local-model.ts, same 20-delta reply).
//
// `AIChatAgent` itself is not importable here: `agents` 0.32's `agents/ai-chat-agent` only throws ("moved to
// @cloudflare/ai-chat"), and `@cloudflare/ai-chat` is not a dependency of this project. So this is an `Agent` doing
// what `AIChatAgent` does by default on its wire protocol (`cf_agent_use_chat_request` → `cf_agent_use_chat_response`
// frames, `done: true` at the end), with the SDK's own chat building blocks where `agents` exports them
// (`StreamAccumulator` builds the reply message from the chunks):
// - every request's messages are persisted first, one row per message (`cf_ai_chat_agent_messages`, upsert, skipped
//   when unchanged), then read back and broadcast to the other connections (`cf_agent_chat_messages`);
// - `streamText(...).toUIMessageStreamResponse()` is read as SSE, each chunk sent as a frame and kept for resume in
//   a stream-chunk table, flushed every 10 chunks, with a stream metadata row marked completed at the end;
// - the reply message is persisted once the stream ends, and the messages are broadcast again.
// Turns of one chat run one at a time, as AIChatAgent queues them.
import { Agent, type Connection, type WSMessage } from "agents";
import { StreamAccumulator, type StreamChunkData } from "agents/chat";
import { convertToModelMessages, streamText, type UIMessage } from "ai";
import { createLocalModel } from "../../../src/models/local-model";

export interface PeerEnv {
  PeerChatAgent: DurableObjectNamespace<PeerChatAgent>;
}

/** The reply the product's bench agent gives: the local "echo" model, 20 deltas, no delay. */
export const PEER_DELTAS = 20;
const CHUNK_BUFFER_SIZE = 10;

const USE_CHAT_REQUEST = "cf_agent_use_chat_request";
const USE_CHAT_RESPONSE = "cf_agent_use_chat_response";
const CHAT_MESSAGES = "cf_agent_chat_messages";

interface ChatRequest {
  type: typeof USE_CHAT_REQUEST;
  id: string;
  init: { method?: string; body?: string };
}

function chatRequest(message: WSMessage): ChatRequest | null {
  if (typeof message !== "string") return null;
  try {
    const parsed: unknown = JSON.parse(message);
    if (typeof parsed !== "object" || parsed === null) return null;
    const frame = parsed as Partial<ChatRequest>;
    if (frame.type !== USE_CHAT_REQUEST || typeof frame.id !== "string" || typeof frame.init !== "object")
      return null;
    return frame as ChatRequest;
  } catch {
    return null;
  }
}

// It reads no binding, so the SDK's default Env type is enough.
export class PeerChatAgent extends Agent {
  messages: UIMessage[] = [];
  readonly #persisted = new Map<string, string>();
  #queue: Promise<void> = Promise.resolve();
  #chunkBuffer: { streamId: string; body: string; index: number }[] = [];

  override async onStart(): Promise<void> {
    this.sql`CREATE TABLE IF NOT EXISTS cf_ai_chat_agent_messages (
      id TEXT PRIMARY KEY, message TEXT NOT NULL, created_at DATETIME DEFAULT CURRENT_TIMESTAMP)`;
    this.sql`CREATE TABLE IF NOT EXISTS cf_ai_chat_stream_chunks (
      id TEXT PRIMARY KEY, stream_id TEXT NOT NULL, body TEXT NOT NULL, chunk_index INTEGER NOT NULL,
      created_at INTEGER NOT NULL)`;
    this
      .sql`CREATE INDEX IF NOT EXISTS idx_stream_chunks_stream_id ON cf_ai_chat_stream_chunks(stream_id, chunk_index)`;
    this.sql`CREATE TABLE IF NOT EXISTS cf_ai_chat_stream_metadata (
      id TEXT PRIMARY KEY, request_id TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL,
      completed_at INTEGER)`;
    this.messages = this.#load();
  }

  override onMessage(connection: Connection, message: WSMessage): Promise<void> {
    const request = chatRequest(message);
    if (request === null || request.init.method !== "POST") return Promise.resolve();
    const turn = this.#queue.then(() => this.#turn(connection, request));
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async #turn(connection: Connection, request: ChatRequest): Promise<void> {
    const body = JSON.parse(request.init.body ?? "{}") as { messages?: UIMessage[] };
    this.#persist(body.messages ?? [], [connection.id]);
    const result = streamText({
      model: createLocalModel("echo", { chunks: PEER_DELTAS, chunkDelayMs: 0 }),
      system: "Echo the visitor.",
      messages: await convertToModelMessages(this.messages),
    });
    const response = result.toUIMessageStreamResponse();
    const streamId = crypto.randomUUID();
    this.sql`INSERT INTO cf_ai_chat_stream_metadata (id, request_id, status, created_at)
      VALUES (${streamId}, ${request.id}, 'streaming', ${Date.now()})`;
    const accumulator = new StreamAccumulator({ messageId: crypto.randomUUID() });
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    let index = 0;
    let pending = "";
    for (;;) {
      const read = await reader?.read();
      if (read === undefined || read.done) break;
      pending += decoder.decode(read.value, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        const json = line.slice(6);
        accumulator.applyChunk(JSON.parse(json) as StreamChunkData);
        this.#storeChunk(streamId, json, index);
        index += 1;
        this.broadcast(JSON.stringify({ type: USE_CHAT_RESPONSE, id: request.id, body: json, done: false }));
      }
    }
    this.#flushChunks();
    this.sql`UPDATE cf_ai_chat_stream_metadata SET status = 'completed', completed_at = ${Date.now()}
      WHERE id = ${streamId}`;
    this.broadcast(JSON.stringify({ type: USE_CHAT_RESPONSE, id: request.id, body: "", done: true }));
    this.#persist([...this.messages, accumulator.toMessage()]);
  }

  /** Upserts the messages that changed, reads them all back, and tells the other connections. */
  #persist(messages: readonly UIMessage[], without: string[] = []): void {
    for (const message of messages) {
      const json = JSON.stringify(message);
      if (this.#persisted.get(message.id) === json) continue;
      this.sql`INSERT INTO cf_ai_chat_agent_messages (id, message) VALUES (${message.id}, ${json})
        ON CONFLICT(id) DO UPDATE SET message = excluded.message`;
      this.#persisted.set(message.id, json);
    }
    this.messages = this.#load();
    this.broadcast(JSON.stringify({ type: CHAT_MESSAGES, messages }), without);
  }

  #load(): UIMessage[] {
    const rows = this.sql<{ id: string; message: string }>`
      SELECT id, message FROM cf_ai_chat_agent_messages ORDER BY created_at`;
    for (const row of rows) this.#persisted.set(row.id, row.message);
    return rows.map((row) => JSON.parse(row.message) as UIMessage);
  }

  #storeChunk(streamId: string, body: string, index: number): void {
    this.#chunkBuffer.push({ streamId, body, index });
    if (this.#chunkBuffer.length >= CHUNK_BUFFER_SIZE) this.#flushChunks();
  }

  #flushChunks(): void {
    const chunks = this.#chunkBuffer;
    this.#chunkBuffer = [];
    const now = Date.now();
    for (const chunk of chunks) {
      this.sql`INSERT INTO cf_ai_chat_stream_chunks (id, stream_id, body, chunk_index, created_at)
        VALUES (${crypto.randomUUID()}, ${chunk.streamId}, ${chunk.body}, ${chunk.index}, ${now})`;
    }
  }
}
