// Bench-only Worker entry (never deployed): routes the bench's requests to its baseline and measuring objects.
import { z } from "zod";
import type { BenchEnv } from "./bench-env";
import {
  INSIGHTS_NOISE_TENANT,
  INSIGHTS_TENANT,
  insightsQuery,
  matchingMessages,
  seedChunk,
} from "./insights";

export { EchoAgent } from "./echo-agent";
export { EntryBench } from "./entry-bench";
export { TurnCost } from "./turn-cost";

function json(value: unknown): Response {
  return Response.json(value);
}

const count = z.number().int().min(0).max(100_000);
const treeShape = z.strictObject({ trunk: count, forks: count, forkLength: count, seed: z.number().int() });
const readOptions = z.strictObject({ iterations: count, walkEvery: count.min(1), reps: count.min(1) });
const turnOptions = z.strictObject({
  turns: count,
  chunks: count.min(1),
  windowMs: z.number().int().min(0).max(60_000).optional(),
});
const seedOptions = z.strictObject({
  tenant: z.enum(["main", "noise"]),
  fromThread: z.number().int().min(0),
  toThread: z.number().int().min(1),
});
const queryOptions = z.strictObject({
  kind: z.enum([
    "analytics-version",
    "analytics-day",
    "search",
    "search-page-2",
    "search-two-words",
    "search-small-tenant",
    "search-common",
  ]),
});

async function body<T>(request: Request, schema: z.ZodType<T>): Promise<T> {
  return schema.parse(await request.json());
}

export default {
  async fetch(request, env) {
    try {
      return await route(request, env);
    } catch (error) {
      // The bench prints this: a plain message rather than wrangler's HTML error page.
      const message = error instanceof Error ? `${error.message}\n${error.stack ?? ""}` : String(error);
      return Response.json({ error: message }, { status: 500 });
    }
  },
} satisfies ExportedHandler<BenchEnv>;

async function route(request: Request, env: BenchEnv): Promise<Response> {
  const url = new URL(request.url);
  const [, first, name, op] = url.pathname.split("/");
  if (url.pathname === "/v1/health") return json({ status: "ok", environment: "bench" });
  if (first === "r2" && name && request.method === "PUT") {
    // B10's baseline: the request's bytes streamed into R2 as they are, nothing checked or hashed.
    const length = Number(request.headers.get("Content-Length"));
    if (request.body === null || !Number.isSafeInteger(length))
      return new Response("length", { status: 411 });
    const stream = request.body.pipeThrough(new FixedLengthStream(length));
    const object = await env.FILES.put(`files/${name}`, stream);
    return json({ key: object?.key, size: object?.size });
  }
  if (first === "echo" && name) {
    return env.ECHO.get(env.ECHO.idFromName(name)).fetch(request);
  }
  if (first === "entry-bench" && name && request.method === "POST") {
    const stub = env.ENTRY_BENCH.get(env.ENTRY_BENCH.idFromName(name));
    if (op === "build") return json(await stub.build(await body(request, treeShape)));
    if (op === "read") return json(await stub.read(await body(request, readOptions)));
  }
  if (first === "turn-cost" && name && request.method === "POST") {
    const stub = env.TURN_COST.get(env.TURN_COST.idFromName(name));
    return json(await stub.run(await body(request, turnOptions)));
  }
  if (first === "insights" && request.method === "POST") {
    if (name === "seed") {
      const o = await body(request, seedOptions);
      const tenant = o.tenant === "main" ? INSIGHTS_TENANT : INSIGHTS_NOISE_TENANT;
      return json(await seedChunk(env.DB, tenant, o.fromThread, o.toThread));
    }
    if (name === "query") return json(await insightsQuery(env.DB, (await body(request, queryOptions)).kind));
    if (name === "optimize") {
      const t0 = Date.now();
      await env.DB.prepare("INSERT INTO agent_messages_fts (agent_messages_fts) VALUES ('optimize')").run();
      return json({ ms: Date.now() - t0 });
    }
    if (name === "count") {
      const { word } = await body(request, z.strictObject({ word: z.string().regex(/^[a-z]+$/) }));
      return json({ word, messages: await matchingMessages(env.DB, word) });
    }
  }
  return new Response("not found", { status: 404 });
}
