// Builders for thread tests: a live agent, browser-style launches, and WebSocket clients that read frames.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { z } from "zod";
import { type ServerFrame, serverFrameSchema } from "../../src/shared/protocol";
import {
  API,
  api,
  createAgent,
  createRelease,
  createTenant,
  json,
  publish,
  saveDraft,
  type TestTenant,
  validArtifact,
} from "./tenants";

export const ORIGIN = "https://shop.example.com";

export interface LiveAgent {
  tenantId: string;
  apiKey: string;
  agentId: string;
  publicKey: string;
}

/** A tenant (new, unless one is given) with a public agent whose version 1 is released to 100% of development traffic. */
export async function liveAgent(
  options: { artifact?: Record<string, unknown>; agent?: Record<string, unknown>; tenant?: TestTenant } = {},
): Promise<LiveAgent> {
  const tenant = options.tenant ?? (await createTenant());
  const agent = await createAgent(tenant.apiKey, { allowedOrigins: [ORIGIN], ...(options.agent ?? {}) });
  await saveDraft(tenant.apiKey, agent.id, 0, validArtifact(options.artifact ?? {}));
  await publish(tenant.apiKey, agent.id, 1);
  const release = await createRelease(tenant.apiKey, agent.id, [{ version: 1, weight: 10_000 }]);
  const activated = await api(`/v1/agents/${agent.id}/releases/${release.id}/activate`, {
    method: "POST",
    key: tenant.apiKey,
  });
  expect(activated.status).toBe(200);
  return { tenantId: tenant.tenantId, apiKey: tenant.apiKey, agentId: agent.id, publicKey: agent.publicKey };
}

export const launchResponse = z.object({
  token: z.string(),
  expiresAt: z.string(),
  threadId: z.string(),
  websocketUrl: z.string(),
  threadUrl: z.string(),
  protocol: z.literal("agent.v1"),
  visitorToken: z.string().optional(),
});
export type Launch = z.infer<typeof launchResponse>;

let ipCounter = 0;
/** A fresh client IP per call keeps launch rate limits from leaking between tests. */
export function freshIp(): string {
  ipCounter += 1;
  return `203.0.113.${ipCounter % 250}-${crypto.randomUUID().slice(0, 6)}`;
}

export function launchRequest(
  body: unknown,
  options: { origin?: string | null; ip?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "CF-Connecting-IP": options.ip ?? freshIp(),
    ...(options.headers ?? {}),
  };
  const origin = options.origin === undefined ? ORIGIN : options.origin;
  if (origin !== null) headers.Origin = origin;
  return api("/v1/agent-sessions", { method: "POST", body, headers });
}

export async function launch(
  publicKey: string,
  extra: Record<string, unknown> = {},
  origin = ORIGIN,
): Promise<Launch> {
  return json(await launchRequest({ agentKey: publicKey, ...extra }, { origin }), 201, launchResponse);
}

/** Reads frames from a test-side WebSocket with timeouts. */
export class FrameReader {
  readonly frames: ServerFrame[] = [];
  #waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | null = null;
  readonly #taken = new Set<number>();

  constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (event) => {
      this.frames.push(serverFrameSchema.parse(JSON.parse(String(event.data))));
      this.#wake();
    });
    ws.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      this.#wake();
    });
  }

  #wake() {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** The earliest frame matching `match` that no earlier call returned, waiting for it if needed. */
  async next<T extends ServerFrame["type"]>(
    type: T,
    match: (frame: Extract<ServerFrame, { type: T }>) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<Extract<ServerFrame, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = 0; i < this.frames.length; i++) {
        const frame = this.frames[i]!;
        if (this.#taken.has(i) || frame.type !== type) continue;
        if (match(frame as Extract<ServerFrame, { type: T }>)) {
          this.#taken.add(i);
          return frame as Extract<ServerFrame, { type: T }>;
        }
      }
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) before a ${type} frame`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for a ${type} frame; saw ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("socket did not close");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.closed;
  }

  /** Frames seen so far of one type. */
  all<T extends ServerFrame["type"]>(type: T): Extract<ServerFrame, { type: T }>[] {
    return this.frames.filter((f): f is Extract<ServerFrame, { type: T }> => f.type === type);
  }
}

export function upgradeRequest(
  threadId: string,
  options: {
    token?: string;
    protocols?: string;
    origin?: string | null;
    query?: string;
    upgrade?: boolean;
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.upgrade !== false) headers.Upgrade = "websocket";
  const protocols =
    options.protocols ?? (options.token !== undefined ? `agent.v1, bearer.${options.token}` : undefined);
  if (protocols !== undefined) headers["Sec-WebSocket-Protocol"] = protocols;
  const origin = options.origin === undefined ? ORIGIN : options.origin;
  if (origin !== null) headers.Origin = origin;
  return exports.default.fetch(`${API}/v1/threads/${threadId}/ws${options.query ?? ""}`, { headers });
}

/** Opens an accepted WebSocket to a thread and sends `hello`. */
export async function connect(
  session: { threadId: string; token: string },
  options: { origin?: string; resume?: { runId: string; afterSeq: number } } = {},
): Promise<FrameReader> {
  const res = await upgradeRequest(session.threadId, {
    token: session.token,
    ...(options.origin !== undefined ? { origin: options.origin } : {}),
  });
  if (res.status !== 101) expect.fail(`upgrade answered ${res.status}: ${await res.text()}`);
  expect(res.headers.get("Sec-WebSocket-Protocol")).toBe("agent.v1");
  const ws = res.webSocket!;
  ws.accept();
  const reader = new FrameReader(ws);
  reader.send({ type: "hello", protocol: 1, ...(options.resume ? { resume: options.resume } : {}) });
  await reader.next("ready");
  return reader;
}

export function clientMessageId(): string {
  return `cm_${crypto.randomUUID().replace(/-/g, "")}`;
}
