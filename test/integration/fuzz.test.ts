// Property tests inside workerd: mutated tokens, hostile launch bodies and arbitrary frames never get past the gate.
import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { clientFrameSchema, LIMITS } from "../../src/shared/protocol";
import { allThreadRows, privateLaunchRequest, tenantFootprint, threadObjects } from "../helpers/edge-gate";
import { API, json } from "../helpers/tenants";
import {
  FrameReader,
  freshIp,
  type Launch,
  type LiveAgent,
  launch,
  liveAgent,
  ORIGIN,
  upgradeRequest,
} from "../helpers/threads";
import { b64url } from "../helpers/tokens";
import { untilFrames } from "../helpers/until-frames";

let agent: LiveAgent;
let privateAgent: LiveAgent;
beforeAll(async () => {
  agent = await liveAgent();
  privateAgent = await liveAgent({ agent: { visibility: "private" } });
});

const B64URL_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Characters a mutation may write: base64url, separators and a few that confuse naive parsers. */
const tokenChar = fc.constantFrom(...`${B64URL_CHARS}.=+/ ,;"'\\{}%`.split(""));

function decodeSegment(segment: string): unknown {
  try {
    const padded = segment.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(padded + "=".repeat((4 - (padded.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))));
  } catch {
    return null;
  }
}

/** Mutations as data, so a failing case prints readably. */
type Mutation =
  | { op: "flip" | "insert"; at: number; ch: string }
  | { op: "delete"; at: number; n: number }
  | { op: "reorder"; order: [number, number, number] }
  | { op: "reencode"; segment: 0 | 1; key: string; value: fc.JsonValue | undefined };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("flip" as const), at: fc.nat(), ch: tokenChar }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), ch: tokenChar }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), n: fc.integer({ min: 1, max: 8 }) }),
  fc.record({
    op: fc.constant("reorder" as const),
    order: fc.constantFrom<[number, number, number]>(
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0],
      [0, 0, 2],
      [1, 1, 2],
    ),
  }),
  // Re-encode the header or payload JSON with one key set to an arbitrary value (or removed), keeping the signature.
  fc.record({
    op: fc.constant("reencode" as const),
    segment: fc.constantFrom<0 | 1>(0, 1),
    key: fc.constantFrom(
      "alg",
      "typ",
      "kid",
      "exp",
      "iat",
      "nbf",
      "tenantId",
      "threadId",
      "agentEntityId",
      "sub",
      "aud",
      "x",
    ),
    value: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
  }),
);

function mutate(t: string, m: Mutation): string {
  switch (m.op) {
    case "flip": {
      const at = m.at % t.length;
      return t.slice(0, at) + m.ch + t.slice(at + 1);
    }
    case "insert": {
      const at = m.at % (t.length + 1);
      return t.slice(0, at) + m.ch + t.slice(at);
    }
    case "delete": {
      const at = m.at % t.length;
      return t.slice(0, at) + t.slice(at + m.n);
    }
    case "reorder": {
      const parts = t.split(".");
      return m.order.map((i) => parts[i] ?? "").join(".");
    }
    case "reencode": {
      const parts = t.split(".");
      const decoded = z.record(z.string(), z.unknown()).safeParse(decodeSegment(parts[m.segment] ?? ""));
      if (!decoded.success) return t;
      const edited: Record<string, unknown> = { ...decoded.data, [m.key]: m.value };
      if (m.value === undefined) delete edited[m.key];
      parts[m.segment] = b64url(JSON.stringify(edited));
      return parts.join(".");
    }
  }
}

/** Strings with lone surrogates mixed in. */
const withLoneSurrogates = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u)),
    ),
    {
      maxLength: 6,
    },
  )
  .map((parts) => parts.join(""));

function launchBodies(publicKey: string): fc.Arbitrary<string> {
  const key = JSON.stringify(publicKey);
  return fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }))
      .map((extra) => JSON.stringify({ agentKey: publicKey, ...extra })),
    fc.jsonValue({ maxDepth: 3 }).map((v) => `{"__proto__": ${JSON.stringify(v)}, "agentKey": ${key}}`),
    fc
      .jsonValue({ maxDepth: 2 })
      .map((v) => `{"agentKey": ${key}, "__proto__": {"polluted": ${JSON.stringify(v) ?? "1"}}}`),
    fc.constant(`{"constructor": {"prototype": {"polluted": true}}, "agentKey": ${key}}`),
    fc.constant(`{"agentKey": ${key}, "threadId": {"__proto__": {"polluted": true}}}`),
    withLoneSurrogates.map((s) => JSON.stringify({ agentKey: s })),
    withLoneSurrogates.map((s) => JSON.stringify({ agentKey: publicKey, visitorToken: s, threadId: s })),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => `{"agentKey": "pk_\\u${u.toString(16)}abcdefgh"}`),
    fc
      .constantFrom(
        "1e400",
        "-1e400",
        "1e-400",
        "123456789012345678901234567890123456789",
        "-0",
        "0.1e999999",
      )
      .map((n) => `{"agentKey": ${key}, "threadId": ${n}}`),
    fc.integer({ min: 1, max: 4000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
    fc.integer({ min: 1, max: 400 }).map((n) => `${'{"a":'.repeat(n)}null${"}".repeat(n)}`),
    fc.string({ maxLength: 40 }),
  );
}

function polluted(): boolean {
  return Reflect.get({}, "polluted") !== undefined || Object.keys(Object.prototype).length > 0;
}

describe("fuzzing the edge gate", () => {
  it("refuses every mutation of a valid launch token with 401 or 403 on the upgrade", async () => {
    const session = await launch(agent.publicKey);
    const objects = await threadObjects();
    const seen: number[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
        const token = mutations.reduce(mutate, session.token);
        fc.pre(token !== session.token);
        const res = await upgradeRequest(session.threadId, { protocols: `agent.v1, bearer.${token}` });
        seen.push(res.status);
        if (res.webSocket) {
          res.webSocket.accept();
          res.webSocket.close();
        }
        expect([401, 403]).toContain(res.status);
      }),
      { numRuns: 200 },
    );
    expect(seen.length).toBeGreaterThan(100);
    expect(await threadObjects()).toBe(objects);
    // Positive control: the unmutated token still opens a socket.
    const ok = await upgradeRequest(session.threadId, { token: session.token });
    expect(ok.status).toBe(101);
    ok.webSocket!.accept();
    ok.webSocket!.close();
  }, 120_000);

  it("never answers arbitrary launch bodies with a 5xx, and nothing pollutes a prototype", async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(launchBodies(agent.publicKey), async (body) => {
        const res = await exports.default.fetch(`${API}/v1/agent-sessions`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
          body,
        });
        statuses.add(res.status);
        await res.arrayBuffer();
        expect([201, 400, 401, 403, 404, 413]).toContain(res.status);
        expect(polluted()).toBe(false);
      }),
      { numRuns: 200 },
    );
    expect(statuses.has(400)).toBe(true);
  }, 120_000);
});

/** JSON text of one value a context variable might be given: valid ones, and the number and string edge cases. */
const contextValueText = fc.oneof(
  fc.string({ maxLength: 20 }).map((v) => JSON.stringify(v)),
  fc.string({ minLength: 995, maxLength: 1005 }).map((v) => JSON.stringify(v)),
  withLoneSurrogates.map((v) => JSON.stringify(v)),
  fc.double().map((v) => JSON.stringify(v) ?? "0"),
  fc.integer().map(String),
  fc.boolean().map(String),
  fc.constantFrom("null", "1e400", "-1e400", "-0", "123456789012345678901234567890123456789", "[]", "{}"),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? "null"),
  fc.constant('{"polluted": true}'),
);

const contextKey = fc.oneof(
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,70}$/),
  fc.string({ maxLength: 8 }),
  withLoneSurrogates,
  fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", ""),
);

/** A launch's `context` as raw JSON text, so `__proto__` stays an own key and 1e400 reaches the server as written. */
const contextText: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc
      .array(fc.tuple(contextKey, contextValueText), { maxLength: 40 })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(", ")}}`),
    weight: 6,
  },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '{"__proto__": {"polluted": true}}',
      '{"__proto__": "x", "name": "Ada"}',
      '{"constructor": {"prototype": {"polluted": true}}}',
      '{"constructor": "x", "toString": 1, "hasOwnProperty": true}',
      "{}",
    ),
    weight: 1,
  },
);

/** What docs/protocol.md allows as a context, written apart from the server's schema. */
function contextAllowed(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  if (entries.length > 32) return false;
  for (const [key, item] of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(key) || key === "__proto__") return false;
    if (
      typeof item === "string"
        ? item.length > 1000
        : typeof item === "number"
          ? !Number.isFinite(item)
          : typeof item !== "boolean"
    )
      return false;
  }
  return new TextEncoder().encode(JSON.stringify(value)).byteLength <= 8 * 1024;
}

const registryContext = z.object({ context: z.string().nullable() });

describe("fuzzing the launch context", () => {
  it("answers arbitrary private contexts with 201 exactly when the documented rules allow them, storing them, else 400 storing nothing", async () => {
    const statuses = new Set<number>();
    let launchNo = 0;
    await fc.assert(
      fc.asyncProperty(contextText, async (context) => {
        launchNo += 1;
        const body = `{"agentId": ${JSON.stringify(privateAgent.agentId)}, "subject": "fuzz-${launchNo}", "context": ${context}}`;
        const before = await tenantFootprint(privateAgent.tenantId);
        const res = await privateLaunchRequest(privateAgent.apiKey, body);
        statuses.add(res.status);
        const answer = await res.text();
        expect(polluted()).toBe(false);
        const parsed: unknown = JSON.parse(context);
        const expected =
          new TextEncoder().encode(body).byteLength > 16 * 1024 ? 413 : contextAllowed(parsed) ? 201 : 400;
        expect(res.status, answer).toBe(expected);
        if (res.status !== 201) {
          expect(await tenantFootprint(privateAgent.tenantId)).toEqual(before);
          return;
        }
        const threadId = z.object({ threadId: z.string() }).parse(JSON.parse(answer)).threadId;
        const row = registryContext.parse(
          await env.DB.prepare("SELECT context FROM threads WHERE tenant_id = ? AND id = ?")
            .bind(privateAgent.tenantId, threadId)
            .first(),
        );
        const empty = Object.keys(parsed as object).length === 0;
        if (empty) expect(row.context).toBeNull();
        // Stored as JSON, where -0 is 0.
        else expect(JSON.parse(row.context ?? "null")).toEqual(JSON.parse(JSON.stringify(parsed)));
      }),
      { numRuns: 150 },
    );
    expect(statuses.has(201)).toBe(true);
    expect(statuses.has(400)).toBe(true);
  }, 120_000);

  it("answers every public launch carrying context with 400 (413 past 8 KiB), storing nothing", async () => {
    const rows = await allThreadRows();
    await fc.assert(
      fc.asyncProperty(contextText, async (context) => {
        const body = `{"agentKey": ${JSON.stringify(agent.publicKey)}, "context": ${context}}`;
        const res = await exports.default.fetch(`${API}/v1/agent-sessions`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
          body,
        });
        await res.arrayBuffer();
        expect(res.status).toBe(new TextEncoder().encode(body).byteLength > 8 * 1024 ? 413 : 400);
        expect(polluted()).toBe(false);
      }),
      { numRuns: 100 },
    );
    expect(await allThreadRows()).toBe(rows);
  }, 120_000);
});

const sendFrame = fc.record({
  type: fc.constant("send"),
  clientMessageId: fc.stringMatching(/^[A-Za-z0-9_-]{8,24}$/),
  text: fc.string({ minLength: 1, maxLength: 40 }),
});

const frameTypes = [
  "hello",
  "send",
  "cancel",
  "regenerate",
  "edit",
  "history",
  "ping",
  "state",
  "cf_agent_state",
  "rpc",
  "",
];

/** One frame as the client sends it: text (JSON or not) or binary. */
const frame: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { arbitrary: sendFrame.map((f) => JSON.stringify(f)), weight: 4 },
  {
    arbitrary: fc
      .tuple(
        sendFrame,
        fc.dictionary(
          fc.constantFrom("role", "parentId", "entryId", "state", "id", "seq"),
          fc.jsonValue({ maxDepth: 1 }),
          { minKeys: 1 },
        ),
      )
      .map(([f, extra]) => JSON.stringify({ ...f, ...extra })),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom(...frameTypes),
        fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
      )
      .map(([type, rest]) => JSON.stringify({ ...rest, type })),
    weight: 3,
  },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), weight: 2 },
  { arbitrary: fc.string({ maxLength: 60 }), weight: 2 },
  { arbitrary: fc.uint8Array({ maxLength: 32 }), weight: 1 },
  { arbitrary: fc.constant("x".repeat(64 * 1024 + 1)), weight: 1 },
);

const ALLOWED_CLOSE_CODES = [4400, 1009, 4429];

/** Valid `send` frames, by clientMessageId: the only frames that may ever become user entries. */
function validSends(frames: (string | Uint8Array)[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of frames) {
    if (typeof f !== "string") continue;
    let value: unknown;
    try {
      value = JSON.parse(f);
    } catch {
      continue;
    }
    const parsed = clientFrameSchema.safeParse(value);
    if (parsed.success && parsed.data.type === "send" && !out.has(parsed.data.clientMessageId)) {
      out.set(parsed.data.clientMessageId, parsed.data.text);
    }
  }
  return out;
}

function isInvalid(f: string | Uint8Array): boolean {
  if (typeof f !== "string") return true;
  try {
    return !clientFrameSchema.safeParse(JSON.parse(f)).success;
  } catch {
    return true;
  }
}

/** Waits until the final ping was answered (so every earlier frame was handled) and no run is still open. */
function settle(reader: FrameReader, expectedPongs: number): Promise<void> {
  return untilFrames(
    reader,
    () => {
      if (reader.closed) return true;
      const runs = reader.all("run");
      const open = new Set(runs.map((r) => r.runId));
      for (const r of runs) if (["succeeded", "failed", "aborted"].includes(r.status)) open.delete(r.runId);
      return reader.all("pong").length >= expectedPongs && open.size === 0;
    },
    "the frames to settle",
  );
}

const userEntries = z.object({
  items: z.array(
    z.object({ role: z.string().nullable(), text: z.string(), clientMessageId: z.string().optional() }),
  ),
});

async function openSocket(session: Launch): Promise<FrameReader> {
  const res = await upgradeRequest(session.threadId, { token: session.token });
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const reader = new FrameReader(ws);
  reader.send({ type: "hello", protocol: 1 });
  await reader.next("ready");
  return reader;
}

describe("fuzzing frames", () => {
  it("stores only valid sends as user entries and closes only with a defined code", async () => {
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 5 }), async (frames) => {
        const session = await launch(agent.publicKey);
        const reader = await openSocket(session);
        for (const f of frames) {
          if (reader.closed) break;
          try {
            reader.ws.send(f);
          } catch {
            break;
          }
        }
        if (!reader.closed) {
          try {
            reader.send({ type: "ping" });
          } catch {
            // Closed between the check and the send.
          }
        }
        // Pings inside the fuzzed frames answer too: only the pong of the final ping proves all frames were handled.
        const pings = frames.filter(
          (f) => typeof f === "string" && !isInvalid(f) && JSON.parse(f).type === "ping",
        );
        await settle(reader, pings.length + 1);

        if (reader.closed) expect(ALLOWED_CLOSE_CODES).toContain(reader.closed.code);
        else {
          const invalid = frames.filter(isInvalid).length;
          expect(reader.all("error").length).toBeGreaterThanOrEqual(invalid);
        }

        const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/entries`, {
          headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
        });
        const entries = await json(res, 200, userEntries);
        const users = entries.items.filter((e) => e.role === "user");
        const allowed = validSends(frames);
        expect(users.length).toBeLessThanOrEqual(allowed.size);
        for (const entry of users) {
          expect(entry.clientMessageId).toBeDefined();
          expect(allowed.get(entry.clientMessageId!)).toBe(entry.text);
        }
        expect(entries.items.every((e) => e.role === "user" || e.role === "assistant")).toBe(true);
        stored += users.length;
        if (!reader.closed) reader.ws.close();
      }),
      { numRuns: 100 },
    );
    expect(stored).toBeGreaterThan(0);
    expect(await allThreadRows()).toBeGreaterThan(0);
  }, 300_000);

  it("closes a socket sent frames faster than its budget with a defined code, storing only valid sends", async () => {
    // Mostly cheap valid frames, so most bursts outlast the malformed-frame limit and reach the frame budget.
    const cheap = fc.constantFrom<string | Uint8Array>(
      JSON.stringify({ type: "ping" }),
      JSON.stringify({ type: "history", limit: 2 }),
      JSON.stringify({ type: "hello", protocol: 1 }),
    );
    const burst = fc.array(fc.oneof({ arbitrary: cheap, weight: 30 }, { arbitrary: frame, weight: 1 }), {
      minLength: LIMITS.frameBurst + 10,
      maxLength: LIMITS.frameBurst * 3,
    });
    const codes = new Set<number>();
    await fc.assert(
      fc.asyncProperty(burst, async (frames) => {
        const session = await launch(agent.publicKey);
        const reader = await openSocket(session);
        for (const f of frames) {
          if (reader.closed) break;
          try {
            reader.ws.send(f);
          } catch {
            break;
          }
        }
        const closed = await reader.waitClosed(30_000);
        codes.add(closed.code);
        expect(ALLOWED_CLOSE_CODES).toContain(closed.code);

        const res = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/entries`, {
          headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
        });
        const entries = await json(res, 200, userEntries);
        const allowed = validSends(frames);
        for (const entry of entries.items.filter((e) => e.role === "user")) {
          expect(allowed.get(entry.clientMessageId ?? "")).toBe(entry.text);
        }
      }),
      { numRuns: 15 },
    );
    expect(codes.has(4429)).toBe(true);
  }, 300_000);
});
