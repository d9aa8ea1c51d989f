// Sending attachments (docs/protocol.md#attachments): a message names uploads of its own thread, at most maxFiles of
// them; the user entry carries their refs; the local model's reply names what it was handed; publish refuses a model
// that cannot take an accepted type.
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AttachmentRef, attachmentRef } from "../../src/shared/protocol";
import { messageResponse } from "../../src/shared/sessions-api";
import { threadExportSchema } from "../../src/storage/thread/thread-export";
import { drainThread, threadStub } from "../helpers/projection";
import {
  API,
  api,
  createAgent,
  createTenant,
  expectError,
  fieldPaths,
  json,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";
import {
  clientMessageId,
  connect,
  type Launch,
  type LiveAgent,
  launch,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 9]);
const ATTACHMENTS = { enabled: true, maxFiles: 2 };

/** Uploads through the thread's own route (launch token), as the widget does; answers the ref. */
async function upload(session: Launch, name: string, bytes = PNG): Promise<AttachmentRef> {
  const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/attachments`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${session.token}`,
      Origin: ORIGIN,
      "Content-Type": "image/png",
      "Content-Length": String(bytes.byteLength),
      "X-Attachment-Name": encodeURIComponent(name),
    },
    body: bytes,
  });
  return json(res, 201, attachmentRef);
}

/** The user messages the thread stores. */
async function userTexts(agent: LiveAgent, threadId: string): Promise<string[]> {
  return runInDurableObject(await threadStub(agent, threadId), (_instance, state) =>
    state.storage.sql
      .exec("SELECT json_extract(body_json, '$.text') AS text FROM entries WHERE role = 'user' ORDER BY seq")
      .toArray()
      .map((row) => String(row.text)),
  );
}

const named = (ref: AttachmentRef) =>
  `${ref.name} (${ref.mediaType}, ${ref.size} bytes, sha256 ${ref.sha256.slice(0, 12)})`;

describe("a send with attachments over the socket", () => {
  it("carries the refs on the user entry and the local model's reply names each file; foreign or too many ids store nothing", async () => {
    const agent = await liveAgent({ artifact: { attachments: ATTACHMENTS } });
    const session = await launch(agent.publicKey);
    const other = await launch(agent.publicKey);
    const ws = await connect(session);
    const shot = await upload(session, "shot.png");
    const crop = await upload(session, "crop.png", PNG.slice(0, 12));
    const third = await upload(session, "third.png", PNG.slice(0, 10));
    const foreign = await upload(other, "theirs.png");

    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "Whose?", attachments: [foreign.id] });
    const notFound = await ws.next("error");
    expect(notFound.code).toBe("not_found");
    ws.send({
      type: "send",
      clientMessageId: clientMessageId(),
      text: "All three",
      attachments: [shot.id, crop.id, third.id],
    });
    const tooMany = await ws.next("error", (f) => f !== notFound);
    expect(tooMany).toMatchObject({ code: "conflict", reason: "attachment_limit" });
    expect(await userTexts(agent, session.threadId)).toEqual([]);

    ws.send({
      type: "send",
      clientMessageId: clientMessageId(),
      text: "What is this?",
      attachments: [shot.id, crop.id],
    });
    const user = await ws.next("entry", (f) => f.entry.role === "user");
    expect(user.entry.attachments).toEqual([shot, crop]);
    const reply = await ws.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toBe(`Attachments: ${named(shot)}; ${named(crop)}\nEcho: What is this?`);
    // The history a client reads back carries them too.
    ws.send({ type: "history" });
    const history = await ws.next("history");
    expect(history.items.find((e) => e.role === "user")?.attachments).toEqual([shot, crop]);
    // An edit changes the words and keeps the files.
    ws.send({ type: "edit", entryId: user.entry.id, clientMessageId: clientMessageId(), text: "And this?" });
    const edited = await ws.next("entry", (f) => f.entry.role === "user" && f.entry.text === "And this?");
    expect(edited.entry.attachments).toEqual([shot, crop]);
    const editReply = await ws.next(
      "entry",
      (f) => f.entry.role === "assistant" && f.entry.parentId === edited.entry.id,
    );
    expect(editReply.entry.text).toBe(`Attachments: ${named(shot)}; ${named(crop)}\nEcho: And this?`);
    // A message without files is as before: no attachments key at all.
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "Thanks" });
    const plain = await ws.next("entry", (f) => f.entry.role === "user" && f.entry.text === "Thanks");
    expect("attachments" in plain.entry).toBe(false);
    ws.ws.close();
  });

  it("is refused when the agent takes no attachments", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    // (Its uploads are refused too: any id will do.)
    const shot = { id: `att_${"a".repeat(26)}` };
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "Look", attachments: [shot.id] });
    expect((await ws.next("error")).code).toBe("unsupported_media_type");
    expect(await userTexts(agent, session.threadId)).toEqual([]);
    ws.ws.close();
  });
});

describe("a queued send with attachments", () => {
  it("keeps its files while it waits, and its message carries them when its run starts", async () => {
    const agent = await liveAgent({
      artifact: {
        attachments: ATTACHMENTS,
        conversation: { multitask: "enqueue" },
        model: { provider: "local", model: "echo", local: { chunks: 30, chunkDelayMs: 40 } },
      },
    });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const shot = await upload(session, "shot.png");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "A long question to answer slowly." });
    await ws.next("delta", (f) => f.seq === 3);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "And this?", attachments: [shot.id] });
    await ws.next("run", (f) => f.status === "queued" && f.position === 1);
    const user = await ws.next("entry", (f) => f.entry.role === "user" && f.entry.text === "And this?");
    expect(user.entry.attachments).toEqual([shot]);
    const reply = await ws.next(
      "entry",
      (f) => f.entry.role === "assistant" && f.entry.parentId === user.entry.id,
    );
    expect(reply.entry.text).toBe(`Attachments: ${named(shot)}\nEcho: And this?`);
    ws.ws.close();
  });
});

describe("a send held during a handoff", () => {
  it("is stored with its attachments for the person to see", async () => {
    const agent = await liveAgent({ artifact: { attachments: ATTACHMENTS } });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "Hello" });
    await ws.next("run", (f) => f.status === "succeeded");
    const started = await api(`/v1/sessions/${session.threadId}/handoff`, {
      method: "POST",
      key: agent.apiKey,
      body: { action: "start", agentName: "Dana" },
    });
    expect(started.status).toBe(200);
    await ws.next("mode", (f) => f.mode === "handoff");
    const shot = await upload(session, "shot.png");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "For Dana", attachments: [shot.id] });
    const held = await ws.next("entry", (f) => f.entry.role === "user" && f.entry.text === "For Dana");
    expect(held.entry.attachments).toEqual([shot]);
    ws.ws.close();
  });
});

describe("the HTTP message POST with attachments", () => {
  it("answers the entries with the refs and a reply naming them; another thread's id is 404 with nothing stored", async () => {
    const agent = await liveAgent({ artifact: { attachments: ATTACHMENTS } });
    const session = await launch(agent.publicKey);
    const other = await launch(agent.publicKey);
    const headers = { Authorization: `Bearer ${session.token}`, Origin: ORIGIN };
    // The thread object exists once a first message reached it.
    const first = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers,
      body: { clientMessageId: clientMessageId(), text: "Hello" },
    });
    expect(first.status).toBe(201);
    const shot = await upload(session, "shot.png");
    const foreign = await upload(other, "theirs.png");

    const refused = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers,
      body: { clientMessageId: clientMessageId(), text: "Whose?", attachments: [foreign.id] },
    });
    await expectError(refused, 404, "not_found");
    expect(await userTexts(agent, session.threadId)).toEqual(["Hello"]);

    const posted = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers,
      body: { clientMessageId: clientMessageId(), text: "See", attachments: [shot.id] },
    });
    expect(posted.status).toBe(201);
    const reply = (await posted.json()) as {
      entries: { role: string; text: string; attachments?: unknown }[];
    };
    expect(reply.entries[0]?.attachments).toEqual([shot]);
    expect(reply.entries[1]?.text).toBe(`Attachments: ${named(shot)}\nEcho: See`);
    // The export carries the refs on the user entry, and nothing on entries without files.
    const exported = await json(
      await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey }),
      200,
      threadExportSchema,
    );
    const users = exported.entries.filter((e) => e.role === "user");
    expect(users.map((e) => e.attachments)).toEqual([undefined, [shot]]);
    // So does the tenant's sessions API, from the D1 projection.
    await drainThread(await threadStub(agent, session.threadId));
    const messages = await json(
      await api(`/v1/sessions/${session.threadId}/messages`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(messageResponse) }),
    );
    const projected = messages.items.filter((m) => m.role === "user");
    expect(projected.map((m) => m.attachments)).toEqual([undefined, [shot]]);
  });
});

describe("publishing a version with attachments", () => {
  it("is refused, naming attachments.accept, when the model cannot take an accepted type", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const model = { provider: "workers-ai", model: "@cf/meta/llama-3.2-11b-vision-instruct" };
    // The default types include PDF, which no Workers AI model takes.
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact({ model, attachments: { enabled: true } }));
    const refused = await api(`/v1/agents/${agent.id}/versions`, {
      method: "POST",
      key: tenant.apiKey,
      body: { draftRevision: 1 },
    });
    const error = await expectError(refused, 400, "bad_request");
    expect(fieldPaths(error)).toEqual(["attachments.accept"]);
    expect(JSON.stringify(error.details)).toContain("application/pdf");

    // Images only: this vision model takes them, so the version is published.
    await saveDraft(
      tenant.apiKey,
      agent.id,
      1,
      validArtifact({ model, attachments: { enabled: true, accept: ["image/png", "image/jpeg"] } }),
    );
    const published = await api(`/v1/agents/${agent.id}/versions`, {
      method: "POST",
      key: tenant.apiKey,
      body: { draftRevision: 2 },
    });
    expect(published.status).toBe(201);
  });
});
