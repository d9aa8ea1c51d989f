// Attachments (docs/api.md, "Attachments"): uploads streamed into R2 under the tenant and the bytes' SHA-256, every
// refusal before or while the body is read, downloads for the thread and for the tenant, and no byte in SQLite or D1.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tenantQuota } from "../../src/auth/tenant-quota";
import { listTenantAttachmentKeys, stageUpload } from "../../src/storage/attachments";
import { threadObjectName } from "../../src/thread/contract";
import { API, api, expectError, json, operatorHeaders } from "../helpers/tenants";
import { type Launch, launch, liveAgent, ORIGIN } from "../helpers/threads";

const MIB = 1024 * 1024;
const PNG_HEAD = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const uploaded = z.strictObject({
  id: z.string().regex(/^att_[a-z2-7]{26}$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  mediaType: z.string(),
  size: z.number(),
  name: z.string(),
});
const errorReason = z.object({ error: z.object({ code: z.string(), reason: z.string().optional() }) });

async function withAttachments(attachments: Record<string, unknown> = { enabled: true }, tenant?: never) {
  void tenant;
  const agent = await liveAgent({ artifact: { attachments } });
  return { agent, session: await launch(agent.publicKey) };
}

/** A PNG-signed file of `size` bytes whose body carries `marker`. */
function pngBytes(size: number, marker = ""): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set(PNG_HEAD);
  const text = new TextEncoder().encode(marker);
  bytes.set(text, PNG_HEAD.length);
  for (let i = PNG_HEAD.length + text.length; i < size; i++) bytes[i] = (i * 31) & 0xff;
  return bytes;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function upload(
  session: Launch,
  body: BodyInit | null,
  headers: Record<string, string> = {},
  threadId = session.threadId,
): Promise<Response> {
  const init: RequestInit & { duplex?: "half" } = {
    method: "POST",
    headers: {
      Authorization: `Bearer ${session.token}`,
      Origin: ORIGIN,
      "Content-Type": "image/png",
      ...headers,
    },
    body,
  };
  if (body instanceof ReadableStream) init.duplex = "half";
  return exports.default.fetch(`${API}/v1/threads/${threadId}/attachments`, init);
}

async function expectReason(res: Response, status: number, code: string, reason?: string) {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = errorReason.parse(JSON.parse(text));
  expect(body.error.code).toBe(code);
  if (reason !== undefined) expect(body.error.reason).toBe(reason);
}

/** A body of `total` bytes made chunk by chunk as the reader pulls (never one buffer); counts what was pulled. */
function chunkedBody(total: number, head: Uint8Array = new Uint8Array(PNG_HEAD)) {
  const chunk = 64 * 1024;
  const pulled = { bytes: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled.bytes >= total) {
          controller.close();
          return;
        }
        const size = Math.min(chunk, total - pulled.bytes);
        const bytes = new Uint8Array(size);
        for (let i = 0; i < size; i++) bytes[i] = (pulled.bytes + i) & 0xff;
        if (pulled.bytes === 0) bytes.set(head.subarray(0, Math.min(head.length, size)));
        pulled.bytes += size;
        controller.enqueue(bytes);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled };
}

/** The same bytes as `chunkedBody`, hashed chunk by chunk. */
async function chunkedSha(total: number): Promise<string> {
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  const { stream } = chunkedBody(total);
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    await writer.write(value);
  }
  await writer.close();
  return [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function download(session: Launch, id: string, threadId = session.threadId) {
  return api(`/v1/threads/${threadId}/attachments/${id}`, {
    headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
  });
}

describe("POST /v1/threads/:threadId/attachments", () => {
  it("stores the file under the tenant and its SHA-256 and answers its ref; the download is the same bytes", async () => {
    const { agent, session } = await withAttachments();
    const bytes = pngBytes(4096);
    const res = await upload(session, bytes, {
      "X-Attachment-Name": encodeURIComponent("Bildschirmfoto ü.png"),
    });
    const ref = await json(res, 201, uploaded);
    expect(ref).toMatchObject({
      sha256: await sha256Hex(bytes),
      mediaType: "image/png",
      size: 4096,
      name: "Bildschirmfoto ü.png",
    });
    expect(await listTenantAttachmentKeys(env.ATTACHMENTS, agent.tenantId)).toEqual([
      `attachments/${agent.tenantId}/${ref.sha256}`,
    ]);
    // Nothing is left at the staging keys.
    expect((await env.ATTACHMENTS.list({ prefix: `uploads/${agent.tenantId}/` })).objects).toEqual([]);

    const got = await download(session, ref.id);
    expect(got.status).toBe(200);
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(bytes);
    expect(got.headers.get("Content-Type")).toBe("image/png");
    expect(got.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(got.headers.get("Content-Security-Policy")).toBe("sandbox");
    expect(got.headers.get("Content-Disposition")).toBe(
      "inline; filename*=UTF-8''Bildschirmfoto%20%C3%BC.png",
    );
    expect(got.headers.get("Cache-Control")).toMatch(/^private/);
    expect(await tenantQuota(env, agent.tenantId).attachmentStorage()).toEqual({ bytes: 4096, objects: 1 });
  });

  it("serves a PDF and plain text as downloads (attachment), never inline", async () => {
    const { agent, session } = await withAttachments();
    const pdf = new TextEncoder().encode("%PDF-1.7\n% a small document\n");
    const pdfRef = await json(
      await upload(session, pdf, { "Content-Type": "application/pdf", "X-Attachment-Name": "a.pdf" }),
      201,
      uploaded,
    );
    const text = await json(
      await upload(session, "<script>alert(1)</script>", { "Content-Type": "text/plain; charset=utf-8" }),
      201,
      uploaded,
    );
    expect(text).toMatchObject({ mediaType: "text/plain", name: "attachment" });
    const pdfDownload = await download(session, pdfRef.id);
    expect(pdfDownload.headers.get("Content-Disposition")).toBe("attachment; filename*=UTF-8''a.pdf");
    await pdfDownload.arrayBuffer();
    // The tenant's own download, with its key.
    const tenantDownload = await api(`/v1/sessions/${session.threadId}/attachments/${text.id}`, {
      key: agent.apiKey,
    });
    expect(tenantDownload.status).toBe(200);
    expect(tenantDownload.headers.get("Content-Disposition")).toBe("attachment; filename*=UTF-8''attachment");
    expect(tenantDownload.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(tenantDownload.headers.get("Content-Security-Policy")).toBe("sandbox");
    expect(await tenantDownload.text()).toBe("<script>alert(1)</script>");
  });

  it("streams a 20 MiB upload through the Worker (a body made chunk by chunk) and stores its SHA-256", async () => {
    const { session } = await withAttachments({ enabled: true, maxBytes: 25 * MIB });
    const total = 20 * MIB;
    const { stream, pulled } = chunkedBody(total);
    const res = await upload(session, stream, { "Content-Length": String(total) });
    const ref = await json(res, 201, uploaded);
    expect(pulled.bytes).toBe(total);
    expect(ref.size).toBe(total);
    expect(ref.sha256).toBe(await chunkedSha(total));
  });

  it("refuses a declared length over maxBytes with 413 before reading the body", async () => {
    const { session } = await withAttachments({ enabled: true, maxBytes: MIB });
    const { stream, pulled } = chunkedBody(2 * MIB);
    const res = await upload(session, stream, { "Content-Length": String(2 * MIB) });
    await expectReason(res, 413, "payload_too_large");
    expect(pulled.bytes).toBeLessThan(MIB);
  });

  it("stops reading a body that runs past maxBytes with 413, whatever its length said, storing nothing", async () => {
    const tenantId = `ten_lying${crypto.randomUUID().slice(0, 8)}`;
    const { stream, pulled } = chunkedBody(8 * MIB);
    // The length the route checked was within the limit; the body keeps going.
    const staged = await stageUpload(env.ATTACHMENTS, {
      tenantId,
      body: stream,
      length: 8 * MIB,
      maxBytes: MIB,
      mediaType: "image/png",
    });
    expect(staged).toMatchObject({ ok: false, code: "payload_too_large" });
    // Read up to the limit and one chunk more, never the rest.
    expect(pulled.bytes).toBeLessThanOrEqual(MIB + 128 * 1024);
    expect((await env.ATTACHMENTS.list({ prefix: `uploads/${tenantId}/` })).objects).toEqual([]);
  });

  it("refuses a body shorter than its length with 400, storing nothing", async () => {
    const tenantId = `ten_short${crypto.randomUUID().slice(0, 8)}`;
    const { stream } = chunkedBody(1000);
    const staged = await stageUpload(env.ATTACHMENTS, {
      tenantId,
      body: stream,
      length: 5000,
      maxBytes: MIB,
      mediaType: "image/png",
    });
    expect(staged).toMatchObject({ ok: false, code: "bad_request" });
    expect((await env.ATTACHMENTS.list({ prefix: `uploads/${tenantId}/` })).objects).toEqual([]);
  });

  it("refuses a body without Content-Length with 400 naming it", async () => {
    const { session } = await withAttachments();
    const { stream } = chunkedBody(1000);
    const res = await upload(session, stream);
    const error = await expectError(res, 400, "bad_request");
    expect(error.message).toContain("Content-Length");
  });

  it("refuses 415 type_not_accepted for a type the agent does not take, and when attachments are off", async () => {
    const { session } = await withAttachments({ enabled: true, accept: ["application/pdf"] });
    await expectReason(
      await upload(session, pngBytes(100)),
      415,
      "unsupported_media_type",
      "type_not_accepted",
    );
    const off = await launch((await liveAgent()).publicKey);
    const res = await upload(off, pngBytes(100));
    const text = await res.text();
    expect(res.status).toBe(415);
    expect(errorReason.parse(JSON.parse(text)).error.reason).toBe("type_not_accepted");
    expect(text).toContain("off");
  });

  it("refuses 415 type_mismatch when the bytes are not the declared image or PDF, storing nothing", async () => {
    const { agent, session } = await withAttachments();
    await expectReason(
      await upload(session, "just some text, not a picture"),
      415,
      "unsupported_media_type",
      "type_mismatch",
    );
    await expectReason(
      await upload(session, pngBytes(64), { "Content-Type": "application/pdf" }),
      415,
      "unsupported_media_type",
      "type_mismatch",
    );
    expect((await env.ATTACHMENTS.list({ prefix: `uploads/${agent.tenantId}/` })).objects).toEqual([]);
    expect(await listTenantAttachmentKeys(env.ATTACHMENTS, agent.tenantId)).toEqual([]);
  });

  it("refuses 409 attachment_limit once the thread holds maxPerThread files", async () => {
    const { session } = await withAttachments({ enabled: true, maxPerThread: 2 });
    await json(await upload(session, pngBytes(100, "one")), 201, uploaded);
    await json(await upload(session, pngBytes(100, "two")), 201, uploaded);
    await expectReason(await upload(session, pngBytes(100, "three")), 409, "conflict", "attachment_limit");
  });

  it("refuses 429 storage_quota past the operator's storageBytes, shown by the operator API", async () => {
    const { agent, session } = await withAttachments();
    const patched = await api(`/v1/operator/tenants/${agent.tenantId}`, {
      method: "PATCH",
      headers: operatorHeaders(),
      body: { quotas: { storageBytes: 3000 } },
    });
    expect(patched.status, await patched.text()).toBe(200);
    const shown = await api(`/v1/operator/tenants/${agent.tenantId}`, { headers: operatorHeaders() });
    expect(((await shown.json()) as { quotas: { storageBytes: number } }).quotas.storageBytes).toBe(3000);
    await json(await upload(session, pngBytes(2000, "first")), 201, uploaded);
    // The same bytes again cost nothing more.
    await json(await upload(session, pngBytes(2000, "first")), 201, uploaded);
    await expectReason(
      await upload(session, pngBytes(2000, "second")),
      429,
      "quota_exceeded",
      "storage_quota",
    );
    expect(await tenantQuota(env, agent.tenantId).attachmentStorage()).toEqual({ bytes: 2000, objects: 1 });
    expect((await env.ATTACHMENTS.list({ prefix: `uploads/${agent.tenantId}/` })).objects).toEqual([]);
  });

  it("counts uploads with the thread's sends per minute (429 rate_limited past it)", async () => {
    const agent = await liveAgent({
      artifact: { attachments: { enabled: true }, limits: { maxSendsPerMinute: 2 } },
    });
    const session = await launch(agent.publicKey);
    // A send and an upload use the minute's two.
    const sent = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { clientMessageId: `cmid-${crypto.randomUUID()}`, text: "hello" },
    });
    expect(sent.status, await sent.text()).toBe(201);
    await json(await upload(session, pngBytes(100, "r1")), 201, uploaded);
    await expectReason(await upload(session, pngBytes(100, "r2")), 429, "rate_limited");
  });

  it("refuses bad names and wrong tokens", async () => {
    const { session } = await withAttachments();
    await expectError(
      await upload(session, pngBytes(100), { "X-Attachment-Name": "%E0%A4%A" }),
      400,
      "bad_request",
    );
    await expectError(
      await upload(session, pngBytes(100), { "X-Attachment-Name": encodeURIComponent("a\nb") }),
      400,
      "bad_request",
    );
    await expectError(
      await upload(session, pngBytes(100), { "X-Attachment-Name": "x".repeat(256) }),
      400,
      "bad_request",
    );
    await expectError(
      await upload(session, pngBytes(100), { Authorization: "Bearer nope" }),
      401,
      "unauthenticated",
    );
    const other = await launch((await liveAgent({ artifact: { attachments: { enabled: true } } })).publicKey);
    // Another thread's token for this thread's path.
    const res = await upload(other, pngBytes(100), {}, session.threadId);
    expect([403, 404]).toContain(res.status);
    await res.arrayBuffer();
  });
});

describe("dedup and isolation", () => {
  it("keeps the same bytes once per tenant, and once in each of two tenants", async () => {
    const one = await withAttachments();
    const two = await withAttachments();
    const bytes = pngBytes(1500, `same-${crypto.randomUUID()}`);
    const a = await json(await upload(one.session, bytes), 201, uploaded);
    const b = await json(await upload(one.session, bytes), 201, uploaded);
    const c = await json(await upload(two.session, bytes), 201, uploaded);
    expect(a.id).not.toBe(b.id);
    expect(new Set([a.sha256, b.sha256, c.sha256]).size).toBe(1);
    expect(await listTenantAttachmentKeys(env.ATTACHMENTS, one.agent.tenantId)).toEqual([
      `attachments/${one.agent.tenantId}/${a.sha256}`,
    ]);
    expect(await listTenantAttachmentKeys(env.ATTACHMENTS, two.agent.tenantId)).toEqual([
      `attachments/${two.agent.tenantId}/${a.sha256}`,
    ]);
  });

  it("answers 404 for another thread's or another tenant's attachment", async () => {
    const one = await withAttachments();
    const ref = await json(await upload(one.session, pngBytes(300)), 201, uploaded);
    // Another thread of the same agent.
    const sibling = await launch(one.agent.publicKey);
    await expectError(await download(sibling, ref.id), 404, "not_found");
    // Another tenant, with its own key, naming the thread and the id.
    const two = await withAttachments();
    await expectError(
      await api(`/v1/sessions/${one.session.threadId}/attachments/${ref.id}`, { key: two.agent.apiKey }),
      404,
      "not_found",
    );
    // The right tenant, the wrong thread for the id.
    await expectError(
      await api(`/v1/sessions/${sibling.threadId}/attachments/${ref.id}`, { key: one.agent.apiKey }),
      404,
      "not_found",
    );
    await expectError(
      await api(`/v1/sessions/${one.session.threadId}/attachments/${ref.id}`, { key: "sk_wrong" }),
      401,
      "unauthenticated",
    );
  });

  it("keeps no byte of a file in the thread's SQLite, the quota object or any D1 table", async () => {
    const { agent, session } = await withAttachments();
    const marker = `MARKER-${crypto.randomUUID()}`;
    await json(
      await upload(session, pngBytes(5000, marker), { "X-Attachment-Name": "m.png" }),
      201,
      uploaded,
    );
    const found: string[] = [];
    const { results: tables } = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
    ).all<{ name: string }>();
    expect(tables.length).toBeGreaterThan(10);
    for (const { name } of tables) {
      const { results } = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
      if (JSON.stringify(results).includes(marker)) found.push(`D1 ${name}`);
    }
    const objectName = await threadObjectName(env.DO_NAME_KEY, {
      tenantId: agent.tenantId,
      environment: "development",
      agentId: agent.agentId,
      threadId: session.threadId,
    });
    for (const [label, stub] of [
      ["thread", env.THREAD.get(env.THREAD.idFromName(objectName))],
      ["quota", env.QUOTA.get(env.QUOTA.idFromName(agent.tenantId))],
    ] as const) {
      const dump = await runInDurableObject(stub, async (_instance, state) => {
        const names = state.storage.sql
          .exec(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
          )
          .toArray()
          .map((row) => String(row.name));
        const out: { table: string; text: string }[] = [];
        for (const table of names) {
          const rows = state.storage.sql.exec(`SELECT * FROM "${table}"`).toArray();
          const text = rows
            .map((row) =>
              Object.values(row)
                .map((v) => (v instanceof ArrayBuffer ? new TextDecoder().decode(v) : String(v)))
                .join(" "),
            )
            .join("\n");
          out.push({ table, text });
        }
        return { out, attachments: names.includes("attachments") };
      });
      expect(dump.out.length).toBeGreaterThan(0);
      if (label === "thread") expect(dump.attachments).toBe(true);
      for (const { table, text } of dump.out) if (text.includes(marker)) found.push(`${label} ${table}`);
    }
    expect(found).toEqual([]);
    // The marker is in R2, where the bytes belong.
    const keys = await listTenantAttachmentKeys(env.ATTACHMENTS, agent.tenantId);
    const object = await env.ATTACHMENTS.get(keys[0]!);
    expect(await object!.text()).toContain(marker);
  });

  it("deletes an object when the last thread of the tenant referencing it is released, and survives a restart", async () => {
    const { agent, session } = await withAttachments();
    const other = await launch(agent.publicKey);
    const shared = pngBytes(700, `shared-${crypto.randomUUID()}`);
    const own = pngBytes(700, `own-${crypto.randomUUID()}`);
    const a = await json(await upload(session, shared), 201, uploaded);
    await json(await upload(other, shared), 201, uploaded);
    const b = await json(await upload(session, own), 201, uploaded);
    const quota = () => tenantQuota(env, agent.tenantId);
    // The ledger is in the object's SQLite: a restart of the object keeps it.
    await evictDurableObject(quota());
    expect(await quota().attachmentStorage()).toEqual({ bytes: 1400, objects: 2 });
    // The first thread goes: only its own file is deleted; the shared one is still another thread's.
    expect(await quota().releaseThreadAttachments(session.threadId)).toEqual([b.sha256]);
    expect(await listTenantAttachmentKeys(env.ATTACHMENTS, agent.tenantId)).toEqual([
      `attachments/${agent.tenantId}/${a.sha256}`,
    ]);
    expect(await quota().releaseThreadAttachments(session.threadId)).toEqual([]);
    expect(await quota().releaseThreadAttachments(other.threadId)).toEqual([a.sha256]);
    expect(await listTenantAttachmentKeys(env.ATTACHMENTS, agent.tenantId)).toEqual([]);
    expect(await quota().attachmentStorage()).toEqual({ bytes: 0, objects: 0 });
  });
});
