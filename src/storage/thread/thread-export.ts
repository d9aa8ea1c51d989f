// One thread as plain JSON, streamed page by page from the object's own storage (the source of truth), for export.
import { z } from "zod";
import { environmentSchema } from "../../shared/api";
import { ERROR_REASONS } from "../../shared/error-reasons";
import { ERROR_CODES } from "../../shared/errors";
import { attachmentRef, FEEDBACK_RATINGS, RUN_STATUSES } from "../../shared/protocol";
import { attachmentsPage } from "./attachment-export";
import { ENTRY_KINDS, ENTRY_ROLES, EntryStore } from "./entry-store";
import { FeedbackStore } from "./feedback-store";
import type { ThreadBinding } from "./pin-store";
import { type Run, type RunPosition, RunStore } from "./run-store";
import { TOOL_CALL_STATUSES, ToolCallStore } from "./tool-call-store";
import { type UsageRecord, UsageStore } from "./usage-store";

const THREAD_EXPORT_FORMAT = "agent-threads.thread-export.v1";

const isoTime = z.iso.datetime();
const tokens = z.number().int().min(0);

const usageTotalsSchema = z.strictObject({ turns: tokens, inputTokens: tokens, outputTokens: tokens });

export const threadExportSchema = z.strictObject({
  format: z.literal(THREAD_EXPORT_FORMAT),
  threadId: z.string(),
  tenantId: z.string(),
  environment: environmentSchema,
  agent: z.strictObject({
    id: z.string(),
    name: z.string(),
    versionId: z.string(),
    version: z.number().int().positive(),
    digest: z.string(),
  }),
  boundAt: isoTime,
  activeLeafId: z.string().nullable(),
  entries: z.array(
    z.strictObject({
      seq: z.number().int(),
      id: z.string(),
      parentId: z.string().nullable(),
      kind: z.enum(ENTRY_KINDS),
      role: z.enum(ENTRY_ROLES).nullable(),
      runId: z.string().nullable(),
      body: z.json(),
      /** A user message's attachments (docs/api.md#attachments): metadata, absent when it has none. */
      attachments: z.array(attachmentRef).optional(),
      /** The agent version in effect at the entry (docs/api.md): the pin's until a `version_change` above it. */
      version: z.number().int().positive(),
      createdAt: isoTime,
    }),
  ),
  runs: z.array(
    z.strictObject({
      id: z.string(),
      status: z.enum(RUN_STATUSES),
      userEntryId: z.string().nullable(),
      assistantEntryId: z.string().nullable(),
      parentEntryId: z.string().nullable(),
      versionId: z.string().nullable(),
      createdAt: isoTime,
      startedAt: isoTime.nullable(),
      endedAt: isoTime.nullable(),
      abortReason: z.string().nullable(),
      error: z
        .strictObject({
          code: z.enum(ERROR_CODES),
          reason: z.enum(ERROR_REASONS).optional(),
          message: z.string(),
        })
        .nullable(),
    }),
  ),
  toolCalls: z.array(
    z.strictObject({
      id: z.string(),
      runId: z.string(),
      name: z.string(),
      input: z.json(),
      output: z.json().nullable(),
      status: z.enum(TOOL_CALL_STATUSES),
      createdAt: isoTime,
      endedAt: isoTime.nullable(),
    }),
  ),
  usage: z.strictObject({
    turns: z.array(
      z.strictObject({
        runId: z.string(),
        turn: z.number().int().min(0),
        provider: z.string(),
        model: z.string(),
        inputTokens: tokens,
        outputTokens: tokens,
        createdAt: isoTime,
      }),
    ),
    byRun: z.array(z.strictObject({ runId: z.string(), ...usageTotalsSchema.shape })),
    totals: usageTotalsSchema,
  }),
  /** The user's current rating of assistant entries (rating null: cleared), in entry-id order. */
  feedback: z.array(
    z.strictObject({
      entryId: z.string(),
      rating: z.enum(FEEDBACK_RATINGS).nullable(),
      comment: z.string().nullable(),
      subject: z.string(),
      createdAt: isoTime,
      updatedAt: isoTime,
    }),
  ),
  /**
   * Every file uploaded to the thread (sent with a message or not), oldest first, with the tenant's download path
   * (docs/privacy.md#attachments). The bytes are not in the export: `download` fetches them with the same `sk_` key.
   */
  attachments: z.array(
    z.strictObject({
      ...attachmentRef.shape,
      createdAt: isoTime,
      download: z.string(),
    }),
  ),
});

export type ThreadExport = z.infer<typeof threadExportSchema>;

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** Rows read per step of the export: one chunk of the stream holds at most this many of one section. */
const PAGE = 200;

const shape = threadExportSchema.shape;
const headerSchema = threadExportSchema.pick({
  format: true,
  threadId: true,
  tenantId: true,
  environment: true,
  agent: true,
  boundAt: true,
  activeLeafId: true,
});
const entrySchema = shape.entries.element;
const runSchema = shape.runs.element;
const toolCallSchema = shape.toolCalls.element;
const usageTurnSchema = shape.usage.shape.turns.element;
const runTotalsSchema = shape.usage.shape.byRun.element;
const totalsSchema = shape.usage.shape.totals;
const feedbackSchema = shape.feedback.element;
const attachmentSchema = shape.attachments.element;

/**
 * The items of one JSON array, a page at a time: each page's items joined by commas (and led by one after the first
 * non-empty page). Every item passes its schema first, as the whole document once did.
 */
function* arrayItems<T>(
  pages: Iterable<readonly T[]>,
  schema: { parse(value: unknown): unknown },
): Generator<string> {
  let first = true;
  for (const page of pages) {
    if (page.length === 0) continue;
    const text = page.map((item) => JSON.stringify(schema.parse(item))).join(",");
    yield first ? text : `,${text}`;
    first = false;
  }
}

/**
 * One thread as the text of a `threadExportSchema` document, produced a page at a time: the same bytes as
 * `JSON.stringify` of the whole parsed document (keys in schema order), without ever holding more than one page.
 * Each section is read as the thread holds it when the stream reaches it.
 */
function* exportText(storage: DurableObjectStorage, binding: ThreadBinding): Generator<string> {
  const now = () => Date.now();
  const entries = new EntryStore(storage, { now });
  const runs = new RunStore(storage, { now });
  const calls = new ToolCallStore(storage, { now });
  const usage = new UsageStore(storage, { now });

  const header = JSON.stringify(
    headerSchema.parse({
      format: THREAD_EXPORT_FORMAT,
      threadId: binding.threadId,
      tenantId: binding.tenantId,
      environment: binding.environment,
      agent: {
        id: binding.agentId,
        name: binding.artifact.name,
        versionId: binding.versionId,
        version: binding.version,
        digest: binding.digest,
      },
      boundAt: iso(binding.boundAt),
      activeLeafId: entries.latestLeaf()?.id ?? null,
    }),
  );
  yield `${header.slice(0, -1)},"entries":[`;
  yield* arrayItems(
    (function* () {
      for (let after = 0; ; ) {
        const page = entries.all({ afterSeq: after, limit: PAGE });
        const last = page[page.length - 1];
        if (last === undefined) return;
        yield page.map((e) => ({
          seq: e.seq,
          id: e.id,
          parentId: e.parentId,
          kind: e.kind,
          role: e.role,
          runId: e.runId,
          body: e.body,
          ...(e.attachments !== undefined ? { attachments: e.attachments } : {}),
          version: e.agentVersion ?? binding.version,
          createdAt: iso(e.createdAt),
        }));
        after = last.seq;
      }
    })(),
    entrySchema,
  );

  function* runPages(): Generator<readonly Run[]> {
    for (let after: RunPosition | null = null; ; ) {
      const page = runs.page(after, PAGE);
      if (page.last === null) return;
      yield page.runs;
      after = page.last;
    }
  }
  yield `],"runs":[`;
  yield* arrayItems(
    (function* () {
      for (const page of runPages()) {
        yield page.map((run) => ({
          id: run.id,
          status: run.status,
          userEntryId: run.userEntryId,
          assistantEntryId: run.assistantEntryId,
          parentEntryId: run.parentEntryId,
          versionId: run.versionId,
          createdAt: iso(run.createdAt),
          startedAt: isoOrNull(run.startedAt),
          endedAt: isoOrNull(run.endedAt),
          abortReason: run.abortReason,
          error: run.error,
        }));
      }
    })(),
    runSchema,
  );
  yield `],"toolCalls":[`;
  yield* arrayItems(
    (function* () {
      for (const page of runPages()) {
        yield page.flatMap((run) =>
          calls.forRun(run.id).map((call) => ({
            id: call.id,
            runId: call.runId,
            name: call.name,
            input: call.input,
            output: call.output,
            status: call.status,
            createdAt: iso(call.createdAt),
            endedAt: isoOrNull(call.endedAt),
          })),
        );
      }
    })(),
    toolCallSchema,
  );

  yield `],"usage":{"turns":[`;
  yield* arrayItems(
    (function* () {
      for (let after: UsageRecord | null = null; ; ) {
        const page = usage.page(after, PAGE);
        const last = page[page.length - 1];
        if (last === undefined) return;
        yield page.map((u) => ({ ...u, createdAt: iso(u.createdAt) }));
        after = last;
      }
    })(),
    usageTurnSchema,
  );
  // The totals are the sums of the per-run totals as streamed, so the two always agree.
  const totals = { turns: 0, inputTokens: 0, outputTokens: 0 };
  yield `],"byRun":[`;
  yield* arrayItems(
    (function* () {
      for (let after: { firstAt: number; runId: string } | null = null; ; ) {
        const page = usage.totalsByRunPage(after, PAGE);
        const last = page[page.length - 1];
        if (last === undefined) return;
        for (const sum of page) {
          totals.turns += sum.turns;
          totals.inputTokens += sum.inputTokens;
          totals.outputTokens += sum.outputTokens;
        }
        yield page.map(({ runId, turns, inputTokens, outputTokens }) => ({
          runId,
          turns,
          inputTokens,
          outputTokens,
        }));
        after = last;
      }
    })(),
    runTotalsSchema,
  );
  yield `],"totals":${JSON.stringify(totalsSchema.parse(totals))}},"feedback":[`;
  const feedback = new FeedbackStore(storage, { now });
  yield* arrayItems(
    (function* () {
      for (let after = ""; ; ) {
        const page = feedback.page(after, PAGE);
        const last = page[page.length - 1];
        if (last === undefined) return;
        yield page.map((f) => ({
          entryId: f.entryId,
          rating: f.rating,
          comment: f.comment,
          subject: f.subject,
          createdAt: iso(f.createdAt),
          updatedAt: iso(f.updatedAt),
        }));
        after = last.entryId;
      }
    })(),
    feedbackSchema,
  );
  yield `],"attachments":[`;
  yield* arrayItems(
    (function* () {
      for (let after: { createdAt: number; id: string } | null = null; ; ) {
        const page = attachmentsPage(storage, after, PAGE);
        const last = page[page.length - 1];
        if (last === undefined) return;
        yield page.map((a) => ({
          id: a.id,
          sha256: a.sha256,
          mediaType: a.mediaType,
          size: a.size,
          name: a.name,
          createdAt: iso(a.createdAt),
          download: `/v1/sessions/${encodeURIComponent(binding.threadId)}/attachments/${a.id}`,
        }));
        after = last;
      }
    })(),
    attachmentSchema,
  );
  yield "]}";
}

/**
 * `GET …/export` as a byte stream: the whole tree (every branch), runs, tool calls, usage per turn, per run and in
 * total, the user's feedback, the thread's attachments (metadata and download path), and the pin, read from the object's storage a page per chunk as the client reads. A row that fails its
 * schema ends the stream with an error (the client sees a cut-off document, never a wrong one).
 */
export function exportThreadStream(
  storage: DurableObjectStorage,
  binding: ThreadBinding,
): ReadableStream<Uint8Array> {
  const text = exportText(storage, binding);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = text.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    cancel() {
      text.return(undefined);
    },
  });
}
