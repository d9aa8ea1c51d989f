// Attachments in the model input (docs/api.md#attachments): each adapter receives the bytes as its own image and
// document parts, and the audit rebuild reads them back from the bucket to the recorded digest, byte for byte.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tenantRunQuota } from "../../src/auth/run-quota";
import { type Artifact, artifactSchema } from "../../src/control/artifact";
import { digestOf } from "../../src/control/canonical-json";
import { newId } from "../../src/control/ids";
import { resolveModel } from "../../src/models/resolve-model";
import { base64Encode } from "../../src/shared/bytes";
import { toHex } from "../../src/shared/hex";
import type { AttachmentRef } from "../../src/shared/protocol";
import { runInputResponse } from "../../src/shared/sessions-api";
import { attachmentKey } from "../../src/storage/attachments";
import { insertAttachment } from "../../src/storage/thread/attachment-store";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import { readRunAudit } from "../../src/storage/thread/run-audit-store";
import type { RunInputView } from "../../src/thread/contract";
import { ThreadRuntime } from "../../src/thread/conversation/thread-runtime";
import { VersionBindings } from "../../src/thread/run/run-artifact";
import { rebuildRunInput } from "../../src/thread/run/run-input";
import {
  type FakeReply,
  fakeAnthropic,
  fakeOpenAICompatible,
  fakeWorkersAI,
} from "../helpers/fake-providers";
import { api, createTenant } from "../helpers/tenants";

const API_KEY = "sk-test-4f1c9a7e2b8d0e6f";

afterEach(() => {
  vi.restoreAllMocks();
});

/** A PNG signature, then bytes no text encoding would produce. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 1, 254, 7, 42]);
const PDF = new TextEncoder().encode("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n");
const TXT = new TextEncoder().encode("Order A1: two boxes, one opened.\n");

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** Stores the bytes under the tenant's key and records the upload on the thread, as an upload does. */
async function attach(
  storage: DurableObjectStorage,
  tenantId: string,
  name: string,
  mediaType: string,
  bytes: Uint8Array,
): Promise<AttachmentRef> {
  const ref: AttachmentRef = {
    id: newId("att"),
    sha256: await sha256Hex(bytes),
    mediaType,
    size: bytes.byteLength,
    name,
  };
  await env.ATTACHMENTS.put(attachmentKey(tenantId, ref.sha256), bytes);
  insertAttachment(storage, ref, Date.now());
  return ref;
}

interface Provider {
  name: string;
  model: Record<string, unknown>;
  /** The files of the turn: what this provider's model takes (Workers AI takes no PDF). */
  files: { name: string; mediaType: string; bytes: Uint8Array }[];
  install(replies: FakeReply[]): { env: Env; sent: () => string[] };
  /** What the provider must have received for each file: its own part, with the bytes in base64. */
  expectedParts(files: Provider["files"]): unknown[];
}

const workersAiBytes = (call: { model: string; inputs: unknown }) =>
  JSON.stringify({ model: call.model, inputs: call.inputs });

const IMAGE = { name: "shot.png", mediaType: "image/png", bytes: PNG };
const DOCUMENT = { name: "invoice.pdf", mediaType: "application/pdf", bytes: PDF };
const NOTES = { name: "notes.txt", mediaType: "text/plain", bytes: TXT };

const providers: Provider[] = [
  {
    name: "openai-compatible",
    model: {
      provider: "openai-compatible",
      model: "gpt-fake",
      baseUrl: "https://llm.example.test/v1",
      apiKeySecret: "llm-key",
    },
    files: [IMAGE, DOCUMENT],
    install(replies) {
      const fake = fakeOpenAICompatible(replies);
      vi.spyOn(globalThis, "fetch").mockImplementation(fake.fetch);
      return { env, sent: () => fake.requests.map((r) => r.text) };
    },
    expectedParts: () => [
      { type: "image_url", image_url: { url: `data:image/png;base64,${base64Encode(PNG)}` } },
      {
        type: "file",
        file: { filename: "invoice.pdf", file_data: `data:application/pdf;base64,${base64Encode(PDF)}` },
      },
    ],
  },
  {
    name: "anthropic",
    model: {
      provider: "anthropic",
      model: "claude-fake",
      baseUrl: "https://anthropic.example.test/v1",
      apiKeySecret: "llm-key",
    },
    files: [IMAGE, DOCUMENT],
    install(replies) {
      const fake = fakeAnthropic(replies);
      vi.spyOn(globalThis, "fetch").mockImplementation(fake.fetch);
      return { env, sent: () => fake.requests.map((r) => r.text) };
    },
    expectedParts: () => [
      { type: "image", source: { type: "base64", media_type: "image/png", data: base64Encode(PNG) } },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: base64Encode(PDF) },
        title: "invoice.pdf",
      },
    ],
  },
  {
    name: "workers-ai",
    model: { provider: "workers-ai", model: "@cf/meta/llama-3.2-11b-vision-instruct" },
    files: [IMAGE, NOTES],
    install(replies) {
      const fake = fakeWorkersAI(replies);
      return { env: { ...env, AI: fake.binding }, sent: () => fake.calls.map(workersAiBytes) };
    },
    // The text file is inlined in the text; the image goes as an image_url part.
    expectedParts: () => [
      { type: "image_url", image_url: { url: `data:image/png;base64,${base64Encode(PNG)}` } },
    ],
  },
];

/** Every content part of every user message the provider received, whatever its wire shape. */
function userParts(provider: string, bytes: string): unknown[] {
  const body = JSON.parse(bytes) as { messages?: unknown[]; inputs?: { messages?: unknown[] } };
  const messages = (provider === "workers-ai" ? body.inputs?.messages : body.messages) ?? [];
  return messages.flatMap((m) => {
    const message = m as { role?: string; content?: unknown };
    return message.role === "user" && Array.isArray(message.content) ? message.content : [];
  });
}

/** Feeds a rebuilt input (through JSON, as the HTTP route answers it) to the same adapter and returns what it sent. */
async function replay(provider: Provider, config: Artifact["model"], rebuilt: RunInputView): Promise<string> {
  const input = runInputResponse.parse(JSON.parse(JSON.stringify(rebuilt)));
  const reply: FakeReply[] = [{ kind: "text", deltas: ["ok"] }];
  const http = provider.name === "anthropic" ? fakeAnthropic(reply) : fakeOpenAICompatible(reply);
  const ai = fakeWorkersAI(reply);
  const model = await resolveModel(config, {
    env,
    tenantSecret: async () => API_KEY,
    fetch: http.fetch,
    ai: ai.binding,
  });
  if (!model.ok) throw new Error(`model not resolved: ${model.message}`);
  const { stream } = await model.value.doStream({ prompt: input.messages as never, ...input.parameters });
  await stream.pipeTo(new WritableStream());
  if (provider.name === "workers-ai") {
    const call = ai.calls[0];
    if (call === undefined) throw new Error("the adapter made no call");
    return workersAiBytes(call);
  }
  const request = http.requests[0];
  if (request === undefined) throw new Error("the adapter made no request");
  return request.text;
}

async function bindingFor(tenantId: string, model: Record<string, unknown>): Promise<ThreadBinding> {
  const artifact: Artifact = artifactSchema.parse({
    schemaVersion: 1,
    name: "Orders",
    instructions: "Answer about orders.",
    model,
    attachments: { enabled: true },
  });
  return {
    tenantId,
    environment: "development",
    agentId: "agt_attachments",
    threadId: `thr_${crypto.randomUUID().replace(/-/g, "")}`,
    versionId: "ver_attachments",
    version: 1,
    digest: await digestOf(artifact),
    artifact,
    boundAt: Date.now(),
  };
}

describe.each(providers)("a turn with attachments on the $name adapter", (provider) => {
  it("hands the provider each file's bytes as its part, and the audit rebuild reads them back to the same digest", async () => {
    const tenant = await createTenant();
    const put = await api("/v1/secrets/llm-key", {
      method: "PUT",
      key: tenant.apiKey,
      body: { value: API_KEY },
    });
    expect(put.status).toBe(204);
    const binding = await bindingFor(tenant.tenantId, provider.model);
    const fake = provider.install([
      { kind: "text", deltas: ["Two boxes."] },
      { kind: "text", deltas: ["You are welcome."] },
    ]);
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const outcome = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = new ThreadRuntime({
        storage: state.storage,
        env: fake.env,
        binding,
        now: Date.now,
        peers: () => [],
        keepAliveWhile: (fn) => fn(),
        afterTurn: async () => {},
        quota: tenantRunQuota(fake.env, binding),
      });
      const refs: AttachmentRef[] = [];
      for (const file of provider.files) {
        refs.push(await attach(state.storage, tenant.tenantId, file.name, file.mediaType, file.bytes));
      }
      const runIds: string[] = [];
      // The second turn names no file: the first message's files are still in its prompt window.
      for (const [clientMessageId, text, attachmentIds] of [
        ["cm_files_1", "What is in these?", refs.map((r) => r.id)],
        ["cm_files_2", "Thanks!", undefined],
      ] as const) {
        const accepted = await runtime.submit({
          kind: "send",
          clientMessageId,
          text,
          subject: "vis_alice",
          ...(attachmentIds !== undefined ? { attachmentIds: [...attachmentIds] } : {}),
        });
        if (!accepted.ok || "held" in accepted.value) throw new Error(`turn ${clientMessageId} not run`);
        const settled = await runtime.settled(accepted.value.run.id);
        expect(settled?.status, clientMessageId).toBe("succeeded");
        runIds.push(accepted.value.run.id);
      }
      const views: { recorded: string | null; rebuilt: RunInputView }[] = [];
      for (const runId of runIds) {
        // A fresh read, as the audit route makes it: nothing remembered from the run.
        const rebuilt = await rebuildRunInput(
          state.storage,
          new VersionBindings(state.storage, binding),
          runId,
          {
            attachments: runtime.attachmentBytes,
          },
        );
        if (!rebuilt.ok) throw new Error(rebuilt.message);
        views.push({
          recorded: readRunAudit(state.storage, runId)?.inputDigest ?? null,
          rebuilt: rebuilt.value,
        });
      }
      const first = runtime.entries.get((await runtime.settled(runIds[0] ?? ""))?.userEntryId ?? "");
      return { refs, views, userAttachments: first?.attachments };
    });

    expect(outcome.userAttachments).toEqual(outcome.refs);
    const sent = fake.sent();
    expect(sent).toHaveLength(2);
    for (const [index, { recorded, rebuilt }] of outcome.views.entries()) {
      const label = `run ${index + 1}`;
      expect(recorded, label).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(rebuilt.inputDigest, label).toBe(recorded);
      expect(rebuilt.verified, label).toBe(true);
      // The rebuilt input goes through the adapter to exactly the bytes the provider received.
      expect(await replay(provider, binding.artifact.model, rebuilt), label).toBe(sent[index]);
      // Both runs' prompts carry the first message's files, as the provider's own parts.
      const parts = userParts(provider.name, sent[index] ?? "");
      for (const part of provider.expectedParts(provider.files)) expect(parts, label).toContainEqual(part);
    }
    if (provider.name === "workers-ai") {
      const user = JSON.stringify(userParts(provider.name, sent[0] ?? ""));
      expect(user).toContain(
        JSON.stringify(`Attachment notes.txt (text/plain):\n${new TextDecoder().decode(TXT)}`).slice(1, -1),
      );
    }
  });
});
