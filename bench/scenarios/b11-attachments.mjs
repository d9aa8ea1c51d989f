// B11: a 10 MiB attachment through POST /v1/threads/:threadId/attachments (launch token, size and signature checks,
// SHA-256 while streaming, staged then copied to its tenant/digest key, the tenant ledger) against a plain PUT of the
// same bytes into local R2 from a bare Worker (bench/echo-worker, `PUT /r2/:key`), strictly alternating so each pair
// sees the same moment of machine noise. Every upload has different bytes (no deduplication shortcut). Also the
// widget's attachments module, gzip.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { AdminClient, OperatorClient } from "agent-threads/client";
import { root } from "../../scripts/lib/paths.mjs";
import { launch } from "../lib/product-client.mjs";
import { summarize } from "../lib/stats.mjs";

export const B11_BYTES = 10 * 1024 * 1024;

/** A tenant and an agent that takes PDFs up to 25 MiB, 200 per thread, on the product. */
async function seedUploadAgent(product) {
  const tenant = await new OperatorClient({
    baseUrl: product.baseUrl,
    operatorToken: product.operatorToken,
  }).createTenant("Bench uploads");
  const admin = new AdminClient({ baseUrl: product.baseUrl, apiKey: tenant.apiKey });
  const origin = product.baseUrl;
  const agent = await admin.agents.create({
    slug: "uploads",
    name: "Bench uploads",
    visibility: "public",
    allowedOrigins: [origin],
  });
  const draft = await admin.drafts.put(
    agent.id,
    {
      schemaVersion: 1,
      name: "Bench uploads",
      instructions: "Read the file.",
      model: { provider: "local", model: "echo" },
      attachments: {
        enabled: true,
        accept: ["application/pdf"],
        maxBytes: 25 * 1024 * 1024,
        maxPerThread: 200,
      },
      limits: { maxSendsPerMinute: 1000 },
    },
    0,
  );
  const version = await admin.versions.publish(agent.id, draft.revision);
  const release = await admin.releases.create(agent.id, {
    environment: "development",
    allocations: [{ version: version.version, weight: 10_000 }],
  });
  await admin.releases.activate(agent.id, release.id);
  return { publicKey: agent.publicKey, origin };
}

/** 10 MiB that start as a PDF (the signature check passes) and differ from every other upload in their 16th byte on. */
function pdfBytes(n) {
  const bytes = Buffer.alloc(B11_BYTES, 0x20);
  bytes.write("%PDF-1.7\n%", 0, "latin1");
  bytes.write(String(n).padStart(12, "0"), 16, "latin1");
  for (let i = 64; i < bytes.length; i += 4096) bytes[i] = (n * 31 + i) & 0xff;
  return bytes;
}

const mib = (bytes, ms) => Math.round((bytes / 2 ** 20 / (ms / 1000)) * 10) / 10;

/** Builds the widget; the gzip size of its attachments module (imported only for agents that take attachments). */
export async function attachModuleSize() {
  const { buildWidget } = await import(join(root, "scripts", "build-widget.mjs"));
  const manifest = await buildWidget();
  const path = manifest.lazy?.attachView?.path;
  if (path === undefined) return { pending: "the widget build has no attachments module" };
  const bytes = readFileSync(join(root, "public", path));
  return {
    path,
    bytes: bytes.length,
    gzipBytes: gzipSync(bytes, { level: 9 }).length,
    budgetBytes: 5 * 1024,
  };
}

export async function benchAttachments({ product, echo, rounds = 3, perRound = 5, log }) {
  const agent = await seedUploadAgent(product);
  let n = 0;
  let failures = 0;
  let firstFailure = null;
  const fail = (what) => {
    failures += 1;
    firstFailure ??= what;
  };
  const upload = async (session) => {
    n += 1;
    const body = pdfBytes(n);
    const t0 = performance.now();
    const res = await fetch(`${product.baseUrl}/v1/threads/${session.threadId}/attachments`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${session.token}`,
        // A public agent's thread is used from its allowed origin, as the widget does.
        Origin: agent.origin,
        "Content-Type": "application/pdf",
        "X-Attachment-Name": `bench-${n}.pdf`,
      },
      body,
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 201) return fail(`upload HTTP ${res.status}: ${text.slice(0, 120)}`);
    return ms;
  };
  const put = async () => {
    n += 1;
    const body = pdfBytes(n);
    const t0 = performance.now();
    const res = await fetch(`${echo.baseUrl}/r2/bench-${n}`, { method: "PUT", body });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) return fail(`PUT HTTP ${res.status}: ${text.slice(0, 120)}`);
    return ms;
  };
  // Warm-up: both Workers' first R2 writes, the product's first D1 reads for the agent.
  const warm = await launch(product.baseUrl, agent);
  await upload(warm);
  await put();

  const samples = { upload: [], put: [] };
  for (let round = 0; round < rounds; round += 1) {
    const session = await launch(product.baseUrl, agent);
    for (let i = 0; i < perRound; i += 1) {
      const a = await upload(session);
      if (typeof a === "number") samples.upload.push(a);
      const b = await put();
      if (typeof b === "number") samples.put.push(b);
    }
    log?.(`  round ${round + 1}/${rounds}`);
  }
  const upload50 = summarize(samples.upload);
  const put50 = summarize(samples.put);
  return {
    bytes: B11_BYTES,
    uploads: samples.upload.length,
    uploadMs: upload50,
    putMs: put50,
    uploadMiBps: upload50.p50 ? mib(B11_BYTES, upload50.p50) : null,
    putMiBps: put50.p50 ? mib(B11_BYTES, put50.p50) : null,
    failures,
    ...(firstFailure !== null ? { firstFailure } : {}),
  };
}
