// The tenant's conversations over the admin API (docs/api.md): sessions, their export, handoff, audit and upgrades,
// and the approvals waiting for the tenant across threads (docs/tools.md#approvals).
import type { z } from "zod";
import type { ApprovalStatus, approvalListQuery } from "../shared/approvals-api";
import type { AttachmentRef, WireEntry } from "../shared/protocol";
import type {
  HandoffResponse,
  HumanMessageRequest,
  MessageResponse,
  RunInputResponse,
  SessionResponse,
  SessionSearchRequest,
  sessionListQuery,
  UpgradeResponse,
} from "../shared/sessions-api";
import type { ApprovalDecisionBody, ApprovalView } from "../shared/thread-api";
import { eachItem, type Page, type PageQuery, seg, type Transport } from "./http";

export type SessionListQuery = Omit<z.input<typeof sessionListQuery>, "cursor" | "limit"> & PageQuery;

const pageQuery = (query: PageQuery = {}) => ({ cursor: query.cursor, limit: query.limit });

export type { ApprovalStatus, ApprovalView };
/** `GET /v1/approvals`: one status (default `pending`), one agent, a page. */
export type ApprovalListQuery = Omit<z.input<typeof approvalListQuery>, "cursor" | "limit"> & PageQuery;
/** A decision on an approval; `reason` reaches the model with a denial. */
export type ApprovalDecisionRequest = ApprovalDecisionBody;

/** Conversations as the tenant's backend sees them (D1), their export and erasure, and human handoff. */
export class Sessions {
  constructor(readonly t: Transport) {}
  /** Filters that name no end user (`GET /v1/sessions`); by subject or search text, use `search`. */
  list(query: SessionListQuery = {}): Promise<Page<SessionResponse>> {
    return this.t.json("GET", "/v1/sessions", { query: { ...query } });
  }
  /**
   * The same list by any filter, `subject` and `q` included, sent in a JSON body (`POST /v1/sessions/search`) so an
   * end user's id or words never reach a URL; with `q`, each item carries its `match`.
   */
  search(body: SessionSearchRequest = {}): Promise<Page<SessionResponse>> {
    return this.t.json("POST", "/v1/sessions/search", { body });
  }
  get(threadId: string): Promise<SessionResponse> {
    return this.t.json("GET", `/v1/sessions/${seg(threadId)}`);
  }
  /** The files uploaded to the thread (docs/api.md#attachments): name, media type, size, SHA-256. */
  attachments(threadId: string): Promise<{ items: AttachmentRef[] }> {
    return this.t.json("GET", `/v1/sessions/${seg(threadId)}/attachments`);
  }
  /** One attachment's bytes, typed by its media type. */
  async downloadAttachment(threadId: string, attachmentId: string): Promise<Blob> {
    const res = await this.t.send("GET", `/v1/sessions/${seg(threadId)}/attachments/${seg(attachmentId)}`);
    return res.blob();
  }
  /** Every message of the thread, oldest first, all branches. */
  messages(threadId: string, query?: PageQuery): Promise<Page<MessageResponse>> {
    return this.t.json("GET", `/v1/sessions/${seg(threadId)}/messages`, { query: pageQuery(query) });
  }
  /** The thread's full export document (docs/storage.md). */
  export(threadId: string): Promise<Record<string, unknown>> {
    return this.t.json("GET", `/v1/sessions/${seg(threadId)}/export`);
  }
  /**
   * A run's audit record and the model input of one of its calls (`step`, 0 first; its last by default), rebuilt from
   * storage; `verified` when it hashes to `inputDigest`, and `steps` lists every call's digest.
   */
  runInput(threadId: string, runId: string, options: { step?: number } = {}): Promise<RunInputResponse> {
    return this.t.json("GET", `/v1/sessions/${seg(threadId)}/runs/${seg(runId)}/input`, {
      query: { step: options.step },
    });
  }
  /** Moves the thread to another published version of its agent from its current leaf on (forks above keep theirs). */
  upgrade(threadId: string, version: number): Promise<UpgradeResponse> {
    return this.t.json("POST", `/v1/sessions/${seg(threadId)}/upgrade`, { body: { version } });
  }
  /** Erases the thread object and its D1 rows; its tokens stop working. */
  delete(threadId: string): Promise<void> {
    return this.t.empty("DELETE", `/v1/sessions/${seg(threadId)}`);
  }
  /** A person of the tenant's team takes over: the model stops answering until `endHandoff`. */
  startHandoff(threadId: string, options: { agentName?: string } = {}): Promise<HandoffResponse> {
    return this.t.json("POST", `/v1/sessions/${seg(threadId)}/handoff`, {
      body: { action: "start", ...options },
    });
  }
  endHandoff(threadId: string): Promise<HandoffResponse> {
    return this.t.json("POST", `/v1/sessions/${seg(threadId)}/handoff`, { body: { action: "end" } });
  }
  /**
   * Decides an approval of the thread as the tenant (`by` "tenant" or "any"; 403 when only the user may); a second
   * decision is `conflict` with reason `already_decided`, a late one `expired`.
   */
  decide(
    threadId: string,
    approvalId: string,
    body: ApprovalDecisionRequest,
  ): Promise<{ approval: ApprovalView }> {
    return this.t.json("POST", `/v1/sessions/${seg(threadId)}/approvals/${seg(approvalId)}`, { body });
  }
  /** That person's reply, shown to the user as a `human_agent` message (only during a handoff). */
  postMessage(threadId: string, body: HumanMessageRequest): Promise<{ entry: WireEntry }> {
    return this.t.json("POST", `/v1/sessions/${seg(threadId)}/messages`, { body });
  }
}

/** The tenant's approvals across threads (`GET /v1/approvals`): its inbox of decisions to make. */
export class Approvals {
  constructor(readonly t: Transport) {}
  /** One page, newest first; the pending ones by default. */
  list(query: ApprovalListQuery = {}): Promise<Page<ApprovalView>> {
    return this.t.json("GET", "/v1/approvals", { query: { ...query } });
  }
  /** Every approval matching `query`, page after page. */
  all(query: Omit<ApprovalListQuery, "cursor"> = {}): AsyncGenerator<ApprovalView> {
    return eachItem((cursor) => this.list({ limit: 200, ...query, ...(cursor ? { cursor } : {}) }));
  }
}
