// `npm run thread:demo`: a plain Node WebSocket client walks a whole conversation against a running server —
// launch, stream, drop mid-stream, resume with no gap or duplicate, edit, regenerate, and read both branches back.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { demoStatePath } from "./lib/paths.mjs";

const HELP = `Usage: npm run thread:demo [-- --url http://localhost:8787 --key pk_… --origin http://localhost:8787]

Runs against a server started with \`npm run dev\` (the demo agent's key is read from .wrangler/demo.json).`;

function fail(message) {
  throw new CliError(message);
}

class Socket {
  constructor(url, token, origin) {
    this.frames = [];
    this.waiters = [];
    this.closed = null;
    this.ws = new WebSocket(url, { protocols: ["agent.v1", `bearer.${token}`], headers: { Origin: origin } });
    this.ws.addEventListener("message", (event) => {
      this.frames.push(JSON.parse(String(event.data)));
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.ws.addEventListener("close", (event) => {
      this.closed = { code: event.code };
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  opened() {
    return new Promise((resolve, reject) => {
      this.ws.addEventListener("open", () => resolve(this), { once: true });
      this.ws.addEventListener("error", () => reject(new CliError("the WebSocket did not open")), {
        once: true,
      });
    });
  }

  send(frame) {
    this.ws.send(JSON.stringify(frame));
  }

  async until(predicate, what, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(predicate);
      if (found) return found;
      if (this.closed) fail(`socket closed (${this.closed.code}) while waiting for ${what}`);
      if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      key: { type: "string" },
      origin: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const base = values.url ?? `http://localhost:${process.env.PORT ?? "8787"}`;
  const origin = values.origin ?? base;
  let key = values.key;
  if (key === undefined) {
    try {
      key = JSON.parse(readFileSync(demoStatePath, "utf8")).publicKey;
    } catch {
      fail("no --key given and no .wrangler/demo.json: start `npm run dev` first.");
    }
  }

  const launched = await fetch(`${base}/v1/agent-sessions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: origin },
    body: JSON.stringify({ agentKey: key }),
  });
  if (launched.status !== 201) fail(`launch answered ${launched.status}: ${await launched.text()}`);
  const session = await launched.json();
  console.log(`launched thread ${session.threadId}`);

  const first = await new Socket(session.websocketUrl, session.token, origin).opened();
  if (first.ws.protocol !== "agent.v1") fail(`the server selected "${first.ws.protocol}", not agent.v1`);
  first.send({ type: "hello", protocol: 1 });
  const ready = await first.until((f) => f.type === "ready", "ready");
  console.log(`ready: ${ready.agent.name} v${ready.agent.version}`);

  first.send({
    type: "send",
    clientMessageId: `cm_${crypto.randomUUID().replaceAll("-", "")}`,
    text: "Tell me something.",
  });
  const third = await first.until((f) => f.type === "delta" && f.seq === 3, "the third delta");
  first.ws.close(1000, "dropping mid-stream");
  const before = first.frames.filter((f) => f.type === "delta" && f.runId === third.runId);
  const afterSeq = Math.max(...before.map((d) => d.seq));
  console.log(`dropped the socket after delta ${afterSeq}`);

  const second = await new Socket(session.websocketUrl, session.token, origin).opened();
  second.send({ type: "hello", protocol: 1, resume: { runId: third.runId, afterSeq } });
  await second.until(
    (f) => f.type === "run" && f.runId === third.runId && f.status === "succeeded",
    "the run's end",
  );
  const reply = await second.until(
    (f) => f.type === "entry" && f.entry.role === "assistant",
    "the sealed reply",
  );
  const resumed = second.frames.filter((f) => f.type === "delta" && f.runId === third.runId);
  const seqs = [...before, ...resumed].map((d) => d.seq);
  const contiguous = seqs.every((seq, i) => seq === i + 1);
  const streamed = [...before, ...resumed].map((d) => d.text).join("");
  if (resumed.length > 0 && !contiguous) fail(`deltas after resume are not contiguous: ${seqs.join(",")}`);
  if (resumed.length > 0 && streamed !== reply.entry.text)
    fail("the streamed text differs from the stored reply");
  console.log(
    `resumed: ${resumed.length} missing deltas (seq ${afterSeq + 1}…), ${seqs.length} in all, no gap, no duplicate`,
  );

  const user =
    second.frames.find((f) => f.type === "entry" && f.entry.role === "user") ??
    (await readBranch(base, session, origin)).find((e) => e.role === "user");
  const userEntry = user.entry ?? user;
  second.send({
    type: "edit",
    entryId: userEntry.id,
    text: "Tell me something else.",
    clientMessageId: `cm_${crypto.randomUUID().replaceAll("-", "")}`,
  });
  const edited = await second.until(
    (f) => f.type === "entry" && f.entry.role === "assistant" && f.entry.id !== reply.entry.id,
    "the reply to the edit",
  );
  await second.until(
    (f) => f.type === "run" && f.runId === edited.entry.runId && f.status === "succeeded",
    "its end",
  );
  second.send({ type: "regenerate", entryId: edited.entry.id });
  const regenerated = await second.until(
    (f) =>
      f.type === "entry" &&
      f.entry.role === "assistant" &&
      ![reply.entry.id, edited.entry.id].includes(f.entry.id),
    "the regenerated reply",
  );
  await second.until(
    (f) => f.type === "run" && f.runId === regenerated.entry.runId && f.status === "succeeded",
    "its end",
  );
  second.ws.close();

  const original = await readBranch(base, session, origin, reply.entry.id);
  const current = await readBranch(base, session, origin);
  const show = (items) => items.map((e) => `${e.role}: ${JSON.stringify(e.text.slice(0, 40))}`).join(" → ");
  console.log(`original branch: ${show(original)}`);
  console.log(`current branch:  ${show(current)}`);
  if (original.length !== 2 || original[0].text !== "Tell me something.")
    fail("the original branch was not kept");
  if (
    current.length !== 2 ||
    current[0].text !== "Tell me something else." ||
    current[1].id !== regenerated.entry.id
  ) {
    fail("the current branch is not the edit with its regenerated reply");
  }
  console.log("ok: launch, stream, drop, resume, edit, regenerate and both branches over HTTP");
  return 0;
}

async function readBranch(base, session, origin, leafId) {
  const url = `${base}/v1/threads/${session.threadId}/entries${leafId ? `?leafId=${leafId}` : ""}`;
  const res = await fetch(url, { headers: { Authorization: `Bearer ${session.token}`, Origin: origin } });
  if (res.status !== 200) fail(`entries answered ${res.status}: ${await res.text()}`);
  return (await res.json()).items;
}

if (isMain(import.meta.url)) runMain(main);
