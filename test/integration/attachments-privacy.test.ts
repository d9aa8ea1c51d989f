// Attachments under the privacy rules (docs/privacy.md#attachments): erasure (of a thread, of a subject), retention and
// the zero-retention purge delete the R2 objects no other live thread of the tenant uses, and the receipt lists them; a
// legal hold keeps them; export lists them with download paths; the erasure scan finds no orphan object afterwards.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { compactVerify, createLocalJWKSet } from "jose";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { expirePreviews } from "../../src/jobs/previews";
import { runRetentionJob } from "../../src/jobs/retention";
import { PREVIEW_TTL_MS } from "../../src/services/preview-session";
import { erasureCompleted, receiptPayloadSchema } from "../../src/shared/erasure-api";
import { toHex } from "../../src/shared/hex";
import { previewSessionResponse } from "../../src/shared/launch-api";
import { attachmentRef } from "../../src/shared/protocol";
import { attachmentKey, listTenantAttachmentKeys } from "../../src/storage/attachments";
import { attachmentsToRelease } from "../../src/storage/thread/attachment-release";
import { insertAttachment } from "../../src/storage/thread/attachment-store";
import { EntryStore } from "../../src/storage/thread/entry-store";
import { applyThreadRetention } from "../../src/storage/thread/thread-retention";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { type ErasedThread, expectNothingLeft, scanForErased } from "../helpers/erasure-scan";
import { converse, drainThread, launchFor, threadStub } from "../helpers/projection";
import { API, api, expectError, json, saveDraft, validArtifact } from "../helpers/tenants";
import { inTestQuota } from "../helpers/test-tenant-quota";
import { inTestThread } from "../helpers/test-thread-agent";
import { type Launch, type LiveAgent, liveAgent, ORIGIN } from "../helpers/threads";

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** A file whose bytes carry `marker`, so the scan can look for them anywhere. */
function file(kind: "png" | "text", marker: string) {
  const text = new TextEncoder().encode(`${marker}\n`);
  if (kind === "text") return { bytes: text, mediaType: "text/plain", name: `${marker.slice(0, 12)}.txt` };
  const bytes = new Uint8Array(PNG_SIGNATURE.length + text.length);
  bytes.set(PNG_SIGNATURE);
  bytes.set(text, PNG_SIGNATURE.length);
  return { bytes, mediaType: "image/png", name: "screenshot.png" };
}

async function sha256Of(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** `POST /v1/threads/:threadId/attachments` with the launch token, as the widget uploads. */
async function upload(
  session: Pick<Launch, "threadId" | "token">,
  f: ReturnType<typeof file>,
  origin = ORIGIN,
) {
  const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/attachments`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${session.token}`,
      Origin: origin,
      "Content-Type": f.mediaType,
      "X-Attachment-Name": f.name,
    },
    body: f.bytes,
  });
  const ref = await json(res, 201, attachmentRef);
  expect(ref.sha256).toBe(await sha256Of(f.bytes));
  return ref;
}

/** The tenant's objects in R2, as their SHA-256s, sorted. */
async function objectsOf(tenantId: string): Promise<string[]> {
  const keys = await listTenantAttachmentKeys(env.ATTACHMENTS, tenantId);
  return keys.map((key) => key.slice(key.lastIndexOf("/") + 1)).sort();
}

/** The thread object's attachment rows (metadata only). */
function threadAttachmentRows(stub: DurableObjectStub) {
  return runInDurableObject(stub, (_i, state) =>
    state.storage.sql.exec("SELECT id, sha256 FROM attachments ORDER BY id").toArray(),
  );
}

const withAttachments = (extra: Record<string, unknown> = {}) => ({
  agent: { visibility: "private" },
  artifact: { attachments: { enabled: true }, ...extra },
});

async function jwks() {
  const res = await api("/.well-known/jwks.json");
  expect(res.status).toBe(200);
  return createLocalJWKSet(z.object({ keys: z.array(z.any()) }).parse(await res.json()));
}

async function receiptPayload(receipt: string) {
  const { payload } = await compactVerify(receipt, await jwks());
  return receiptPayloadSchema.parse(JSON.parse(new TextDecoder().decode(payload)));
}

function eraseSubject(agent: LiveAgent, subject: string) {
  return api("/v1/subject-erasures", { method: "POST", key: agent.apiKey, body: { subject } });
}

const erased = (agent: LiveAgent, threadId: string): ErasedThread => ({
  tenantId: agent.tenantId,
  agentId: agent.agentId,
  threadId,
});

/** A promise and its resolve (Promise.withResolvers, which the test's TypeScript target does not name). */
function resolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const sorted = (values: readonly string[]) => [...values].sort();

describe("erasure and attachments", () => {
  it("subject erasure deletes the subject's objects, the receipt lists them, and nothing is left", {
    timeout: 60_000,
  }, async () => {
    const agent = await liveAgent(withAttachments());
    const subject = `user-${crypto.randomUUID()}`;
    const markers = [`photo ${crypto.randomUUID()}`, `notes ${crypto.randomUUID()}`];
    const first = await launchFor(agent, subject);
    const second = await launchFor(agent, subject);
    const a = await upload(first, file("png", markers[0]!));
    const b = await upload(second, file("text", markers[1]!));
    await converse(first, ["here is my screenshot"]);
    expect(await objectsOf(agent.tenantId)).toEqual(sorted([a.sha256, b.sha256]));
    const threads = [erased(agent, first.threadId), erased(agent, second.threadId)];
    // Before the erasure the scan sees the bytes in R2: it is not blind there.
    const before = await scanForErased({ tenantId: agent.tenantId, needles: markers, threads });
    expect(before.filter((line) => line.startsWith("R2 "))).toHaveLength(2);

    const body = erasureCompleted.parse(await (await eraseSubject(agent, subject)).json());
    expect(body.attachments).toEqual(sorted([a.sha256, b.sha256]));
    expect((await receiptPayload(body.receipt)).attachments).toEqual(body.attachments);
    // The kept erasure says the same.
    const kept = erasureCompleted.parse(
      await (await api(`/v1/erasures/${body.id}`, { key: agent.apiKey })).json(),
    );
    expect(kept.attachments).toEqual(body.attachments);
    expect(await objectsOf(agent.tenantId)).toEqual([]);
    await expectError(
      await api(`/v1/sessions/${first.threadId}/attachments/${a.id}`, { key: agent.apiKey }),
      404,
      "not_found",
    );
    await expectNothingLeft({ tenantId: agent.tenantId, needles: [subject, ...markers], threads });
  });

  it("an object two threads share survives the first one's erasure and goes with the second's", {
    timeout: 60_000,
  }, async () => {
    const agent = await liveAgent(withAttachments());
    const shared = file("png", `shared ${crypto.randomUUID()}`);
    const own = file("text", `own ${crypto.randomUUID()}`);
    const alice = `alice-${crypto.randomUUID()}`;
    const bob = `bob-${crypto.randomUUID()}`;
    const aliceThread = await launchFor(agent, alice);
    const bobThread = await launchFor(agent, bob);
    const fromAlice = await upload(aliceThread, shared);
    const ownRef = await upload(aliceThread, own);
    const fromBob = await upload(bobThread, shared);
    // Same bytes, one object for the tenant.
    expect(fromBob.sha256).toBe(fromAlice.sha256);
    expect(await objectsOf(agent.tenantId)).toEqual(sorted([fromAlice.sha256, ownRef.sha256]));

    const first = erasureCompleted.parse(await (await eraseSubject(agent, alice)).json());
    // Only what no live thread uses any more was deleted, and only that is listed.
    expect(first.attachments).toEqual([ownRef.sha256]);
    expect(await objectsOf(agent.tenantId)).toEqual([fromAlice.sha256]);
    const download = await api(`/v1/sessions/${bobThread.threadId}/attachments/${fromBob.id}`, {
      key: agent.apiKey,
    });
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(shared.bytes);
    expect(await scanForErased({ tenantId: agent.tenantId, needles: [alice], threads: [] })).toEqual([]);

    // The tenant erases Bob's one thread directly: the shared object goes with it.
    expect(
      (await api(`/v1/sessions/${bobThread.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    expect(await objectsOf(agent.tenantId)).toEqual([]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [alice, bob, new TextDecoder().decode(shared.bytes.subarray(8)).trim()],
      threads: [erased(agent, aliceThread.threadId), erased(agent, bobThread.threadId)],
    });
  });

  it("a failed object delete keeps the erasure: the answer is 502, the thread stays erased, and a repeat finishes", {
    timeout: 60_000,
  }, async () => {
    const agent = await liveAgent(withAttachments());
    const subject = `user-${crypto.randomUUID()}`;
    const marker = `retry ${crypto.randomUUID()}`;
    const session = await launchFor(agent, subject);
    const ref = await upload(session, file("text", marker));
    const quota = env.QUOTA.get(env.QUOTA.idFromName(agent.tenantId));

    await inTestQuota(quota, (instance) => instance.failAttachmentDeletes(true));
    const failed = await eraseSubject(agent, subject);
    expect(failed.status).toBe(502);
    // The thread is erased already (its token refused), and its object is still owed to the ledger, not orphaned.
    await expectError(
      await api(`/v1/threads/${session.threadId}`, { headers: { Authorization: `Bearer ${session.token}` } }),
      401,
      "unauthenticated",
    );
    expect(await objectsOf(agent.tenantId)).toEqual([ref.sha256]);
    // The scan sees what is left half-way: an object no live thread uses, and an upload left in staging.
    const staging = `uploads/${agent.tenantId}/${crypto.randomUUID()}`;
    await env.ATTACHMENTS.put(staging, "half an upload");
    expect(await scanForErased({ tenantId: agent.tenantId, needles: [subject], threads: [] })).toEqual([
      `R2 ${staging}: an upload left in staging`,
      `R2 ${attachmentKey(agent.tenantId, ref.sha256)}: an orphan object (no live thread uses it)`,
    ]);
    await env.ATTACHMENTS.delete(staging);

    await inTestQuota(quota, (instance) => instance.failAttachmentDeletes(false));
    const body = erasureCompleted.parse(await (await eraseSubject(agent, subject)).json());
    expect(body.attachments).toEqual([ref.sha256]);
    expect(await objectsOf(agent.tenantId)).toEqual([]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, marker],
      threads: [erased(agent, session.threadId)],
    });
  });
});

describe("preview threads", () => {
  it("a console preview's files go with the preview a day later", { timeout: 60_000 }, async () => {
    const agent = await liveAgent();
    await saveDraft(agent.apiKey, agent.agentId, 1, validArtifact({ attachments: { enabled: true } }));
    const res = await api(`/v1/agents/${agent.agentId}/draft/preview-session`, {
      method: "POST",
      key: agent.apiKey,
      body: { draftRevision: 2 },
    });
    const session = await json(res, 201, previewSessionResponse);
    const marker = `preview ${crypto.randomUUID()}`;
    await upload(session, file("text", marker), new URL(API).origin);
    expect(await objectsOf(agent.tenantId)).toHaveLength(1);

    expect(await expirePreviews(env, Date.now() + PREVIEW_TTL_MS + 1000)).toBeGreaterThanOrEqual(1);
    expect(await objectsOf(agent.tenantId)).toEqual([]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [marker],
      threads: [erased(agent, session.threadId)],
    });
  });
});

describe("an upload racing an erasure", () => {
  it("a file whose upload finishes after its thread was erased is not kept", {
    timeout: 60_000,
  }, async () => {
    const agent = await liveAgent(withAttachments());
    const subject = `user-${crypto.randomUUID()}`;
    const session = await launchFor(agent, subject);
    const marker = `late ${crypto.randomUUID()}`;
    const total = 2 * 1024 * 1024;
    const head = new TextEncoder().encode(`${marker}\n`);
    // The body stops after its first megabyte (well past any buffer in front of the route, so the upload was
    // admitted and is streaming) until the test lets it go on.
    const deep = resolvers();
    const go = resolvers();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (sent >= total) {
            controller.close();
            return;
          }
          if (sent >= total / 2) {
            deep.resolve();
            await go.promise;
          }
          const chunk = new Uint8Array(Math.min(64 * 1024, total - sent)).fill(0x2e);
          if (sent === 0) chunk.set(head);
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
    const uploading = exports.default.fetch(`${API}/v1/threads/${session.threadId}/attachments`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${session.token}`,
        Origin: ORIGIN,
        "Content-Type": "text/plain",
        "Content-Length": String(total),
      },
      body,
      duplex: "half",
    } as RequestInit);
    await deep.promise;
    const erasure = erasureCompleted.parse(await (await eraseSubject(agent, subject)).json());
    expect(erasure.threadIds).toEqual([session.threadId]);
    go.resolve();
    const res = await uploading;
    await expectError(res, 401, "unauthenticated");
    expect(await objectsOf(agent.tenantId)).toEqual([]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, marker],
      threads: [erased(agent, session.threadId)],
    });
  });
});

describe("holds, retention and zero retention with attachments", () => {
  it("a held thread keeps its objects through erasure and retention; lifted, retention removes them", {
    timeout: 60_000,
  }, async () => {
    const agent = await liveAgent(withAttachments({ limits: { retention: { maxAgeDays: 1 } } }));
    const subject = `user-${crypto.randomUUID()}`;
    const session = await launchFor(agent, subject);
    const ref = await upload(session, file("png", `held ${crypto.randomUUID()}`));
    await converse(session, ["an old message with a screenshot"]);
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    const placed = await api(`/v1/sessions/${session.threadId}/hold`, {
      method: "PUT",
      key: agent.apiKey,
      body: { reason: "Litigation 2026-17" },
    });
    expect(placed.status).toBe(200);

    const refused = await api(`/v1/sessions/${session.threadId}`, { method: "DELETE", key: agent.apiKey });
    await expectError(refused, 409, "conflict");
    await expectError(await eraseSubject(agent, subject), 409, "conflict");
    await inTestThread(stub, (instance) => instance.clock.advance(3 * DAY_MS));
    await runRetentionJob(env, Date.now() + 3 * DAY_MS);
    await inTestThread(stub, (instance) => instance.dailyMaintenance());
    expect(await objectsOf(agent.tenantId)).toEqual([ref.sha256]);
    const held = await api(`/v1/sessions/${session.threadId}/attachments/${ref.id}`, { key: agent.apiKey });
    expect(held.status).toBe(200);

    expect(
      (await api(`/v1/sessions/${session.threadId}/hold`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    await runRetentionJob(env, Date.now() + 3 * DAY_MS);
    expect(await objectsOf(agent.tenantId)).toEqual([]);
    expect(await threadAttachmentRows(stub)).toEqual([]);
    await expectError(
      await api(`/v1/sessions/${session.threadId}/attachments/${ref.id}`, { key: agent.apiKey }),
      404,
      "not_found",
    );
    expect(await scanForErased({ tenantId: agent.tenantId, needles: ["never there"], threads: [] })).toEqual(
      [],
    );
  });

  it("retention by age removes old files and keeps recent ones", { timeout: 60_000 }, async () => {
    const agent = await liveAgent(withAttachments({ limits: { retention: { maxAgeDays: 1 } } }));
    const session = await launchFor(agent, `user-${crypto.randomUUID()}`);
    const old = await upload(session, file("text", `old ${crypto.randomUUID()}`));
    await converse(session, ["an old message"]);
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    await inTestThread(stub, (instance) => instance.clock.advance(3 * DAY_MS));
    const recent = await upload(session, file("text", `recent ${crypto.randomUUID()}`));

    await inTestThread(stub, (instance) => instance.dailyMaintenance());
    expect(await objectsOf(agent.tenantId)).toEqual([recent.sha256]);
    expect((await threadAttachmentRows(stub)).map((row) => row.id)).toEqual([recent.id]);
    expect(old.id).not.toBe(recent.id);
    expect(await scanForErased({ tenantId: agent.tenantId, needles: ["old "], threads: [] })).toEqual([]);
  });

  it("retention by count drops the files only deleted messages carried; bytes the thread still holds stay claimed", async () => {
    const stub = env.THREAD.get(env.THREAD.idFromName(`retention-files-${crypto.randomUUID()}`));
    const sha = (c: string) => c.repeat(64);
    const result = await runInDurableObject(stub, (_i, state) => {
      migrateThreadSchema(state.storage);
      let clock = 1_000;
      const entries = new EntryStore(state.storage, { now: () => clock });
      const ref = (id: string, sha256: string) => ({
        id,
        sha256,
        mediaType: "text/plain",
        size: 1,
        name: `${id}.txt`,
      });
      const files = { a: ref(`att_${"a".repeat(26)}`, sha("1")), b: ref(`att_${"b".repeat(26)}`, sha("2")) };
      let parent: string | null = null;
      for (const [id, role, carries] of [
        ["u1", "user", files.a],
        ["a1", "assistant", null],
        ["u2", "user", files.b],
        ["a2", "assistant", null],
        ["u3", "user", null],
        ["a3", "assistant", null],
      ] as const) {
        clock += 1_000;
        if (carries !== null) insertAttachment(state.storage, carries, clock);
        const appended = entries.append({ id, parentId: parent, kind: "message", role, body: { text: id } });
        if (!appended.ok) throw new Error(appended.message);
        if (carries !== null)
          state.storage.sql.exec(
            "UPDATE entries SET attachments_json = ? WHERE id = ?",
            JSON.stringify([carries]),
            id,
          );
        parent = id;
      }
      // The bytes of the first file, uploaded again and not sent yet: the thread still holds them.
      const again = ref(`att_${"c".repeat(26)}`, sha("1"));
      insertAttachment(state.storage, again, clock);
      const { deletedEntries } = applyThreadRetention(state.storage, { maxMessagesPerThread: 2 }, clock);
      return {
        deletedEntries,
        rows: state.storage.sql
          .exec("SELECT id FROM attachments ORDER BY id")
          .toArray()
          .map((r) => r.id),
        release: attachmentsToRelease(state.storage),
        again: again.id,
      };
    });
    expect(result.deletedEntries).toBe(4);
    expect(result.rows).toEqual([result.again]);
    expect(result.release).toEqual([sha("2")]);
  });

  it("the zero-retention purge deletes the thread's objects and its attachment rows, a file never sent too", {
    timeout: 60_000,
  }, async () => {
    const agent = await liveAgent(
      withAttachments({
        model: { provider: "local", model: "echo" },
        limits: { retention: { mode: "zero", idleMinutes: 5 } },
      }),
    );
    const subject = `user-${crypto.randomUUID()}`;
    const markers = [`zero ${crypto.randomUUID()}`, `unsent ${crypto.randomUUID()}`];
    const talked = await launchFor(agent, subject);
    await upload(talked, file("png", markers[0]!));
    await converse(talked, ["look at this"]);
    const talkedStub = await threadStub(agent, talked.threadId);
    await drainThread(talkedStub);
    // A thread with an upload and no message yet: the upload alone arms the purge.
    const quiet = await launchFor(agent, subject);
    await upload(quiet, file("text", markers[1]!));
    const quietStub = await threadStub(agent, quiet.threadId);
    const schedules = await inTestThread(quietStub, (instance) => instance.getSchedules());
    expect(schedules.map((s) => s.callback)).toContain("purgeIdleText");
    expect(await objectsOf(agent.tenantId)).toHaveLength(2);

    for (const stub of [talkedStub, quietStub]) {
      await inTestThread(stub, async (instance) => {
        instance.clock.advance(6 * MINUTE_MS);
        await instance.purgeIdleText();
      });
      expect(await threadAttachmentRows(stub)).toEqual([]);
    }
    expect(await objectsOf(agent.tenantId)).toEqual([]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: markers,
      threads: [erased(agent, talked.threadId), erased(agent, quiet.threadId)],
    });
  });
});

describe("export", () => {
  it("lists the thread's attachments with their download paths", { timeout: 60_000 }, async () => {
    const agent = await liveAgent(withAttachments());
    const session = await launchFor(agent, `user-${crypto.randomUUID()}`);
    const f = file("png", `export ${crypto.randomUUID()}`);
    const ref = await upload(session, f);
    const res = await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey });
    expect(res.status).toBe(200);
    const body = z
      .object({ attachments: z.array(z.record(z.string(), z.unknown())) })
      .parse(await res.json());
    expect(body.attachments).toEqual([
      {
        ...ref,
        createdAt: expect.any(String),
        download: `/v1/sessions/${session.threadId}/attachments/${ref.id}`,
      },
    ]);
    const download = await api(String(body.attachments[0]?.download), { key: agent.apiKey });
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(f.bytes);
  });
});
