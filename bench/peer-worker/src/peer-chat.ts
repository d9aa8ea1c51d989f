// The peer baseline for B2: a chat agent exactly as a user of the Cloudflare `agents` SDK writes one — the real
// `AIChatAgent` from `@cloudflare/ai-chat` (a bench-only devDependency) whose `onChatMessage` returns AI SDK
// `streamText(...).toUIMessageStreamResponse()` over the product's own local model (src/models/local-model.ts, the
// same 20-delta echo reply the product's bench agent gives). Everything else is the class's defaults: it persists
// the conversation, queues overlapping submits, keeps the stream resumable and broadcasts to other connections.
import { AIChatAgent, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import { convertToModelMessages, streamText } from "ai";
import { createLocalModel } from "../../../src/models/local-model";

export interface PeerEnv extends Cloudflare.Env {
  PeerChat: DurableObjectNamespace<PeerChat>;
}

/** The reply the product's bench agent gives: the local "echo" model, 20 deltas, no delay. */
export const PEER_DELTAS = 20;

export class PeerChat extends AIChatAgent<PeerEnv> {
  override async onChatMessage(_onFinish: unknown, options?: OnChatMessageOptions): Promise<Response> {
    const result = streamText({
      model: createLocalModel("echo", { chunks: PEER_DELTAS, chunkDelayMs: 0 }),
      system: "Echo the visitor.",
      messages: await convertToModelMessages(this.messages),
      abortSignal: options?.abortSignal,
    });
    return result.toUIMessageStreamResponse();
  }
}
