// One thread's conversation engine: appends user turns, runs one model turn at a time, streams and seals replies.
import { decryptTenantSecret } from "../auth/secret-box";
import { publicHosts } from "../control/url-policy";
import { fail, ok, type Result } from "../errors";
import type { BranchMessage } from "../models/prompt";
import { buildPrompt } from "../models/prompt";
import { resolveModel } from "../models/resolve-model";
import { runTurn } from "../models/turn";
import type { ErrorCode } from "../shared/errors";
import { LIMITS, type ServerFrame } from "../shared/protocol";
import { type Entry, EntryStore } from "../storage/entry-store";
import type { ThreadBinding } from "../storage/pin-store";
import { RunChunkStore } from "../storage/run-chunk-store";
import { type Run, RunStore } from "../storage/run-store";
import { applyThreadRetention, type RetentionPolicy } from "../storage/thread-retention";
import { ToolCallStore } from "../storage/tool-call-store";
import { UsageStore } from "../storage/usage-store";
import { executeToolCall } from "../tools/execute-tool";
import { toolDefinitions, toolNamed } from "../tools/tool-definitions";
import { webhookSecretRedactions } from "../tools/webhook-signature";
import { messageBody, type Peer, toWireEntry } from "./frames";

/** Deltas packed into one stored chunk row (resume reads them back). */
export const DELTAS_PER_CHUNK = 10;
const DEFAULT_CONTEXT_TOKENS = 32_000;
const MAX_MODEL_STEPS = 4;
const STALL_TIMEOUT_MS = 60_000;

export interface ThreadLimits {
  maxMessageChars: number;
  sendsPerMinute: number;
  socketsPerThread: number;
  idleTimeoutSeconds: number;
}

/** A send or an edit carries the client's message id; its run is found again by it when the client retries. */
function runIdempotencyKey(request: { kind: "send" | "edit"; clientMessageId: string }): string {
  return `${request.kind}:${request.clientMessageId}`;
}

export function threadLimits(binding: ThreadBinding): ThreadLimits {
  const limits = binding.artifact.limits ?? {};
  return {
    maxMessageChars: limits.maxMessageChars ?? LIMITS.maxMessageChars,
    sendsPerMinute: limits.maxSendsPerMinute ?? LIMITS.sendsPerMinute,
    socketsPerThread: limits.maxSocketsPerThread ?? LIMITS.socketsPerThread,
    idleTimeoutSeconds: limits.idleTimeoutSeconds ?? LIMITS.idleTimeoutSeconds,
  };
}

interface LiveRun {
  runId: string;
  controller: AbortController;
  /** Seq of the last delta produced. */
  seq: number;
  /** Seq of the last delta persisted in a chunk row. */
  flushedSeq: number;
  /** Deltas produced but not yet persisted. */
  pending: string[];
  done: Promise<Run>;
  /** Stores for this run's writes, redacting every tenant secret the run resolved. */
  stores: RunScopedStores;
  /** The verified subject whose message started the run (tools receive it as identity). */
  subject: string | null;
}

interface RunScopedStores {
  entries: EntryStore;
  runs: RunStore;
  chunks: RunChunkStore;
  toolCalls: ToolCallStore;
  usage: UsageStore;
}

function openRunStores(storage: DurableObjectStorage, options: { now: () => number; secrets?: string[] }) {
  return {
    entries: new EntryStore(storage, options),
    runs: new RunStore(storage, options),
    chunks: new RunChunkStore(storage, options),
    toolCalls: new ToolCallStore(storage, options),
    usage: new UsageStore(storage, options),
  };
}

export interface RuntimeDeps {
  storage: DurableObjectStorage;
  env: Env;
  binding: ThreadBinding;
  now: () => number;
  /** Peers that finished `hello` and receive the live stream. */
  peers: () => Iterable<Peer>;
  /** Keeps the object in memory while a model streams. */
  keepAliveWhile: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Runs after a turn is sealed, still inside the keep-alive (the D1 projection drain). */
  afterTurn: () => Promise<void>;
  /** Outbound fetch for tool webhooks (tests pass a fake). */
  fetch?: typeof fetch;
}

export type TurnRequest = (
  | { kind: "send"; clientMessageId: string; text: string; parentId?: string }
  | { kind: "edit"; entryId: string; clientMessageId: string; text: string }
  | { kind: "regenerate"; entryId: string }
) & { /** Verified subject of the requester. */ subject: string };

export interface TurnAccepted {
  run: Run;
  userEntry: Entry;
  /** False when a retried `send` matched an earlier one: nothing new was stored or started. */
  created: boolean;
}

export class ThreadRuntime {
  readonly #deps: RuntimeDeps;
  readonly #stores: RunScopedStores;
  readonly #entries: EntryStore;
  readonly #runs: RunStore;
  readonly #subscribers = new Set<Peer>();
  #live: LiveRun | null = null;
  /**
   * The prompt messages of the branch ending at `leafId`, kept from the last turn: the next turn below that leaf
   * appends its user message instead of reading the whole branch back. Entries never change, so only retention
   * (which deletes and re-roots them) invalidates it.
   */
  #history: { leafId: string; messages: BranchMessage[] } | null = null;

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
    this.#stores = openRunStores(deps.storage, { now: deps.now });
    this.#entries = this.#stores.entries;
    this.#runs = this.#stores.runs;
  }

  /** Retention over this thread's storage under `policy` (the remembered prompt history goes with it). */
  applyRetention(policy: RetentionPolicy, now: number): { deletedEntries: number } {
    this.#history = null;
    return applyThreadRetention(this.#deps.storage, policy, now);
  }

  get binding(): ThreadBinding {
    return this.#deps.binding;
  }

  get limits(): ThreadLimits {
    return threadLimits(this.#deps.binding);
  }

  get entries(): EntryStore {
    return this.#entries;
  }

  get runs(): RunStore {
    return this.#runs;
  }

  leafId(): string | null {
    return this.#entries.latestLeaf()?.id ?? null;
  }

  readyFrame(): ServerFrame {
    return {
      type: "ready",
      protocol: 1,
      threadId: this.binding.threadId,
      leafId: this.leafId(),
      agent: { name: this.binding.artifact.name, version: this.binding.version },
    };
  }

  liveRunId(): string | null {
    return this.#live?.runId ?? null;
  }

  /** Adds an extra receiver of the live stream (an SSE response) until `unsubscribe`. */
  subscribe(peer: Peer): () => void {
    this.#subscribers.add(peer);
    return () => this.#subscribers.delete(peer);
  }

  /** Frames a (re)connecting peer needs to catch up on a run: missed deltas if it is live, else its outcome. */
  catchUp(runId: string, afterSeq: number): ServerFrame[] {
    const run = this.#runs.get(runId);
    if (run === null) return [{ type: "error", code: "not_found", message: "Run not found." }];
    const live = this.#live;
    if (live !== null && live.runId === runId) {
      const frames: ServerFrame[] = [{ type: "run", runId, status: "running" }];
      for (const delta of this.#stores.chunks.after(runId, afterSeq)) {
        frames.push({ type: "delta", runId, seq: delta.seq, text: delta.text });
      }
      live.pending.forEach((text, i) => {
        const seq = live.flushedSeq + i + 1;
        if (seq > afterSeq) frames.push({ type: "delta", runId, seq, text });
      });
      return frames;
    }
    const frames: ServerFrame[] = [];
    const assistant = run.assistantEntryId === null ? null : this.#entries.get(run.assistantEntryId);
    if (assistant !== null) frames.push({ type: "entry", entry: toWireEntry(assistant) });
    frames.push(this.#runFrame(run));
    return frames;
  }

  /** Validates and stores a user turn, then starts its run. Nothing is stored when it is refused. */
  accept(request: TurnRequest): Result<TurnAccepted> {
    if (request.kind !== "regenerate") {
      const earlier = this.#runs.byIdempotencyKey(runIdempotencyKey(request));
      if (earlier !== null) {
        const userEntry = earlier.userEntryId === null ? null : this.#entries.get(earlier.userEntryId);
        if (userEntry !== null) return ok({ run: earlier, userEntry, created: false });
      }
    }
    if (request.kind !== "regenerate" && request.text.length > this.limits.maxMessageChars) {
      return fail("bad_request", `Messages are limited to ${this.limits.maxMessageChars} characters.`);
    }
    if (this.#live !== null || this.#runs.active().length > 0) {
      return fail("conflict", "A reply is still being written; wait for it or cancel it.");
    }
    if (this.#sendsInLastMinute() >= this.limits.sendsPerMinute) {
      return { ok: false, code: "rate_limited", message: "Too many messages; slow down.", retryAfter: 60 };
    }

    const placed = this.#placeUserTurn(request);
    if (!placed.ok) return placed;
    const { parentId, text, clientMessageId, existingUser } = placed.value;

    const result = this.#deps.storage.transactionSync((): Result<TurnAccepted> => {
      let userEntry: Entry;
      if (existingUser !== undefined) {
        userEntry = existingUser;
      } else {
        const appended = this.#entries.append({
          parentId,
          ...(parentId !== null ? { expectedParentId: parentId } : {}),
          kind: "message",
          role: "user",
          // A retried send or edit is answered above from its run's idempotency key, so the entry needs none.
          body: { text, ...(clientMessageId !== undefined ? { clientMessageId } : {}) },
        });
        if (!appended.ok) return appended;
        userEntry = appended.value.entry;
        // An append below the selected leaf already moves the selection; a fork (edit) must select itself.
        if (this.#entries.latestLeaf()?.id !== userEntry.id) this.#entries.setActiveLeaf(userEntry.id);
      }
      const created = this.#runs.create({
        ...(request.kind !== "regenerate" ? { idempotencyKey: runIdempotencyKey(request) } : {}),
        userEntryId: userEntry.id,
        ...(userEntry.parentId !== null ? { parentEntryId: userEntry.parentId } : {}),
        versionId: this.binding.versionId,
      });
      if (!created.ok) return created;
      return ok({ run: created.value.run, userEntry, created: true });
    });
    if (!result.ok) return result;

    if (existingUser === undefined)
      this.#broadcast({ type: "entry", entry: toWireEntry(result.value.userEntry) });
    this.#broadcast(this.#runFrame(result.value.run));
    this.#start(result.value.run, result.value.userEntry, request.subject);
    return result;
  }

  /** Resolves where a user turn goes; for `regenerate` the user entry already exists. */
  #placeUserTurn(request: TurnRequest): Result<{
    parentId: string | null;
    text: string;
    clientMessageId?: string;
    existingUser?: Entry;
  }> {
    switch (request.kind) {
      case "send": {
        const parentId = request.parentId ?? this.leafId();
        if (request.parentId !== undefined && this.#entries.get(request.parentId) === null) {
          return fail("not_found", "The entry to reply below does not exist in this thread.");
        }
        return ok({ parentId, text: request.text, clientMessageId: request.clientMessageId });
      }
      case "edit": {
        const original = this.#entries.get(request.entryId);
        if (original === null || original.role !== "user") {
          return fail("not_found", "Only a user message of this thread can be edited.");
        }
        return ok({
          parentId: original.parentId,
          text: request.text,
          clientMessageId: request.clientMessageId,
        });
      }
      case "regenerate": {
        const target = this.#entries.get(request.entryId);
        if (target === null || (target.role !== "assistant" && target.role !== "user")) {
          return fail("not_found", "Only a message of this thread can be regenerated.");
        }
        const user =
          target.role === "user" ? target : target.parentId ? this.#entries.get(target.parentId) : null;
        if (user === null || user.role !== "user")
          return fail("not_found", "That reply has no user message.");
        return ok({ parentId: user.parentId, text: messageBody(user).text, existingUser: user });
      }
    }
  }

  cancel(runId: string): Result<Run> {
    const run = this.#runs.get(runId);
    if (run === null) return fail("not_found", "Run not found.");
    if (this.#live?.runId === runId) {
      this.#live.controller.abort("cancelled");
      return ok(run);
    }
    if (run.status === "queued" || run.status === "running") {
      const sealed = this.#seal(run, "", { status: "aborted", reason: "cancelled" });
      return ok(sealed);
    }
    return fail("conflict", `The run has already ${run.status}.`);
  }

  /** Waits for a run to end (for the non-streaming HTTP API). */
  async settled(runId: string): Promise<Run | null> {
    if (this.#live?.runId === runId) return this.#live.done;
    return this.#runs.get(runId);
  }

  /**
   * Seals runs left unfinished by an earlier instance of this object (an eviction or a deploy mid-stream): the
   * persisted part of the reply becomes an interrupted entry and the run ends `aborted`, never stuck `running`.
   */
  recoverInterruptedRuns(): void {
    for (const run of this.#runs.active()) {
      if (this.#live?.runId === run.id) continue;
      this.#seal(run, this.#persistedText(run.id), { status: "aborted", reason: "interrupted" });
    }
  }

  #sendsInLastMinute(): number {
    // Every send, edit and regenerate starts one run, so recent runs are recent sends.
    return this.#runs.countCreatedAfter(this.#deps.now() - 60_000, this.limits.sendsPerMinute + 1);
  }

  #start(run: Run, userEntry: Entry, subject: string | null): void {
    const controller = new AbortController();
    let resolveDone!: (run: Run) => void;
    const done = new Promise<Run>((resolve) => {
      resolveDone = resolve;
    });
    const live: LiveRun = {
      runId: run.id,
      controller,
      seq: 0,
      flushedSeq: 0,
      pending: [],
      done,
      stores: this.#stores,
      subject,
    };
    this.#live = live;
    const finish = (final: Run) => {
      if (this.#live === live) this.#live = null;
      resolveDone(final);
    };
    void this.#deps
      .keepAliveWhile(async () => {
        let final: Run;
        try {
          final = await this.#stream(live, run, userEntry);
        } catch (error) {
          console.error(JSON.stringify({ level: "error", message: "turn crashed", error: String(error) }));
          final = this.#runs.get(run.id) ?? run;
          if (final.status === "queued" || final.status === "running") {
            final = this.#seal(
              final,
              this.#textSoFar(live),
              { status: "failed", error: { code: "internal", message: "The reply failed." } },
              live.stores,
            );
          }
        }
        finish(final);
        // The projection runs inside the same keep-alive: an eviction here leaves the outbox for the next wake.
        await this.#deps.afterTurn();
      })
      .catch((error: unknown) => {
        console.error(JSON.stringify({ level: "error", message: "after-turn failed", error: String(error) }));
        finish(this.#runs.get(run.id) ?? run);
      });
  }

  /** The reply text already packed into chunk rows. */
  #persistedText(runId: string): string {
    return this.#stores.chunks
      .after(runId, 0)
      .map((d) => d.text)
      .join("");
  }

  #textSoFar(live: LiveRun): string {
    return this.#persistedText(live.runId) + live.pending.join("");
  }

  async #stream(live: LiveRun, queued: Run, userEntry: Entry): Promise<Run> {
    const running = this.#runs.transition(queued.id, "running");
    if (!running.ok) return queued;
    this.#broadcast(this.#runFrame(running.value));

    const { binding, env, storage, now } = this.#deps;
    const tools = binding.artifact.tools ?? [];
    // Every secret this run may use is resolved once; each value (in every spelling a tool might echo) is redacted
    // from everything the run stores and from what tools hand back to the model.
    const aliases = new Set([
      ...tools.map((tool) => tool.signingSecret),
      ...(binding.artifact.model.apiKeySecret !== undefined ? [binding.artifact.model.apiKeySecret] : []),
    ]);
    const secretByAlias = new Map<string, string | null>();
    for (const alias of aliases) {
      secretByAlias.set(alias, await decryptTenantSecret(env, binding.tenantId, alias).catch(() => null));
    }
    const secrets = [...secretByAlias.values()].flatMap((value) =>
      value ? [value, ...webhookSecretRedactions(value)] : [],
    );
    if (secrets.length > 0) {
      live.stores = openRunStores(storage, { now, secrets });
    }
    const model = await resolveModel(binding.artifact.model, {
      env,
      tenantSecret: async (alias) => secretByAlias.get(alias) ?? null,
    });
    if (!model.ok) {
      return this.#seal(
        running.value,
        "",
        { status: "failed", error: { code: model.code, message: model.message } },
        live.stores,
      );
    }
    const platformHosts = publicHosts(env);

    let text = "";
    const history = this.#historyFor(userEntry);
    const result = await runTurn({
      model: model.value,
      prompt: buildPrompt({
        instructions: binding.artifact.instructions,
        branch: history,
        maxContextTokens: binding.artifact.limits?.maxContextTokens ?? DEFAULT_CONTEXT_TOKENS,
      }),
      ...(tools.length > 0 ? { tools: toolDefinitions(tools) } : {}),
      signal: live.controller.signal,
      maxSteps: MAX_MODEL_STEPS,
      stallTimeoutMs: STALL_TIMEOUT_MS,
      onDelta: (delta) => {
        if (delta.length === 0) return;
        text += delta;
        live.seq += 1;
        live.pending.push(delta);
        this.#broadcast({ type: "delta", runId: live.runId, seq: live.seq, text: delta });
        if (live.pending.length >= DELTAS_PER_CHUNK) this.#flush(live);
      },
      onToolCall: async (call, signal) => {
        const recorded = live.stores.toolCalls.record({
          runId: live.runId,
          name: call.toolName,
          input: call.input,
        });
        const tool = toolNamed(tools, call.toolName);
        const signingSecret = tool === null ? null : (secretByAlias.get(tool.signingSecret) ?? null);
        const result =
          tool === null || signingSecret === null
            ? {
                output: {
                  error: tool === null ? "Unknown tool." : "The tool's signing secret is not configured.",
                },
                isError: true,
                status: "blocked" as const,
              }
            : await executeToolCall({
                tool,
                call,
                signingSecret,
                fetch: this.#deps.fetch ?? fetch,
                now,
                signal,
                platformHosts,
                secrets,
                context: {
                  tenantId: binding.tenantId,
                  agentId: binding.agentId,
                  threadId: binding.threadId,
                  subject: live.subject,
                  runId: live.runId,
                },
              });
        if (recorded.ok) {
          live.stores.toolCalls.complete(recorded.value.id, {
            status: result.status,
            output: result.output,
          });
        }
        return { output: result.output, ...(result.isError ? { isError: true } : {}) };
      },
      onUsage: (usage) => {
        live.stores.usage.record(live.runId, usage.step, {
          provider: binding.artifact.model.provider,
          model: binding.artifact.model.model,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
        });
      },
    });

    const current = this.#runs.get(live.runId) ?? running.value;
    const sealed = this.#seal(
      current,
      text,
      result.status === "succeeded"
        ? { status: "succeeded" }
        : result.status === "aborted"
          ? { status: "aborted", reason: String(live.controller.signal.reason ?? "cancelled") }
          : { status: "failed", error: { code: result.error.code, message: result.error.message } },
      live.stores,
    );
    this.#remember(history, userEntry, sealed);
    return sealed;
  }

  /** The prompt history ending at `userEntry`: the remembered one plus this message, or the branch read back. */
  #historyFor(userEntry: Entry): BranchMessage[] {
    const known = this.#history;
    if (known !== null && userEntry.parentId === known.leafId) {
      return [...known.messages, { role: "user", text: messageBody(userEntry).text }];
    }
    return this.#branchMessages(userEntry.id);
  }

  /** Keeps the prompt history of the branch a turn ended on, reply included, for the next turn below it. */
  #remember(history: BranchMessage[], userEntry: Entry, sealed: Run): void {
    const reply = sealed.assistantEntryId === null ? null : this.#entries.get(sealed.assistantEntryId);
    const replyText = reply === null ? "" : messageBody(reply).text;
    this.#history =
      reply === null
        ? { leafId: userEntry.id, messages: history }
        : {
            leafId: reply.id,
            messages: replyText.length > 0 ? [...history, { role: "assistant", text: replyText }] : history,
          };
  }

  #flush(live: LiveRun): void {
    if (live.pending.length === 0) return;
    const stored = live.stores.chunks.append(live.runId, live.flushedSeq + 1, live.pending);
    if (stored.ok) {
      live.flushedSeq = stored.value.lastSeq;
      live.pending = [];
    }
  }

  /** Ends a run: the reply entry (if any text), the run's final status and the chunk cleanup commit together. */
  #seal(
    run: Run,
    text: string,
    outcome:
      | { status: "succeeded" }
      | { status: "aborted"; reason: string }
      | { status: "failed"; error: { code: ErrorCode; message: string } },
    stores: RunScopedStores = this.#stores,
  ): Run {
    const entryStatus =
      outcome.status === "succeeded" ? "complete" : outcome.status === "aborted" ? "interrupted" : "failed";
    const sealed = this.#deps.storage.transactionSync((): { run: Run; entry: Entry | null } => {
      let entry: Entry | null = null;
      if (text.length > 0 && run.userEntryId !== null) {
        const appended = stores.entries.append({
          parentId: run.userEntryId,
          kind: "message",
          role: "assistant",
          runId: run.id,
          body: { text, status: entryStatus },
        });
        if (appended.ok) {
          entry = appended.value.entry;
          if (stores.entries.latestLeaf()?.id !== entry.id) stores.entries.setActiveLeaf(entry.id);
        }
      }
      const ended = stores.runs.transition(run.id, outcome.status, {
        ...(entry !== null ? { assistantEntryId: entry.id } : {}),
        ...(outcome.status === "aborted" ? { abortReason: outcome.reason } : {}),
        ...(outcome.status === "failed" ? { error: outcome.error } : {}),
      });
      return { run: ended.ok ? ended.value : run, entry };
    });
    if (sealed.entry !== null) this.#broadcast({ type: "entry", entry: toWireEntry(sealed.entry) });
    this.#broadcast(this.#runFrame(sealed.run));
    return sealed.run;
  }

  #branchMessages(leafId: string): BranchMessage[] {
    const messages: BranchMessage[] = [];
    let cursor: string | undefined;
    do {
      const page = this.#entries.branch(leafId, { limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
      if (!page.ok) break;
      for (const entry of page.value.items) {
        if (entry.kind !== "message") continue;
        const body = messageBody(entry);
        if (entry.role === "user") messages.push({ role: "user", text: body.text });
        else if (entry.role === "assistant" && body.text.length > 0)
          messages.push({ role: "assistant", text: body.text });
      }
      cursor = page.value.nextCursor;
    } while (cursor !== undefined);
    return messages;
  }

  #runFrame(run: Run): ServerFrame {
    return {
      type: "run",
      runId: run.id,
      status: run.status,
      ...(run.status === "failed" && run.error !== null ? { error: run.error } : {}),
    };
  }

  #broadcast(frame: ServerFrame): void {
    for (const peer of this.#deps.peers()) peer.send(frame);
    for (const peer of this.#subscribers) peer.send(frame);
  }
}
