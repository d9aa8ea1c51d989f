// `npm run thread:demo`: the typed client (`agent-threads/client`) walks a whole conversation against a running server —
// launch, stream, drop mid-stream, resume with no gap or duplicate, edit, regenerate, and read both branches back.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { AgentThreadsError, launchPublic, ThreadConnection } from "agent-threads/client";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { localBaseUrl } from "./lib/local-server.mjs";
import { demoStatePath } from "./lib/paths.mjs";

const HELP = `Usage: npm run thread:demo [-- --url http://localhost:8787 --key pk_… --origin http://localhost:8787]

Runs against a server started with \`npm run dev\` (the demo agent's key is read from .wrangler/demo.json).`;

function fail(message) {
  throw new CliError(message);
}

/** Resolves with the first frame of `type` (after `since` frames of it) that `predicate` accepts, or fails. */
function next(connection, type, predicate, what, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new CliError(`timed out waiting for ${what}`));
    }, timeoutMs);
    const off = connection.on(type, (frame) => {
      if (!predicate(frame)) return;
      clearTimeout(timer);
      off();
      resolve(frame);
    });
  });
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
  const baseUrl = values.url ?? localBaseUrl();
  const origin = values.origin ?? baseUrl;
  let agentKey = values.key;
  if (agentKey === undefined) {
    try {
      agentKey = JSON.parse(readFileSync(demoStatePath, "utf8")).publicKey;
    } catch {
      fail("no --key given and no .wrangler/demo.json: start `npm run dev` first.");
    }
  }

  let session;
  try {
    session = await launchPublic({ baseUrl, agentKey, origin });
  } catch (error) {
    if (error instanceof AgentThreadsError)
      fail(`launch answered ${error.status} (${error.code}): ${error.message}`);
    throw error;
  }
  console.log(`launched thread ${session.threadId}`);

  const connection = new ThreadConnection({ launch: session, origin, backoff: { initialMs: 100 } });
  const ready = await connection.connect();
  if (connection.socket?.protocol !== "agent.v1")
    fail(`the server selected "${connection.socket?.protocol}", not agent.v1`);
  console.log(`ready: ${ready.agent.name} v${ready.agent.version}`);

  // Every delta the connection hands on, across the drop: it resumes with `hello {resume}` and passes each seq once.
  const deltas = [];
  connection.on("delta", (frame) => deltas.push(frame));
  let sockets = 0;
  connection.onStatus((status) => {
    if (status === "open") sockets += 1;
  });
  const third = next(connection, "delta", (f) => f.seq === 3, "the third delta");
  connection.send({ text: "Tell me something." });
  const { runId } = await third;
  const ended = next(
    connection,
    "run",
    (f) => f.runId === runId && f.status === "succeeded",
    "the run's end",
  );
  const sealed = next(connection, "entry", (f) => f.entry.role === "assistant", "the sealed reply");
  // A dropped network, not a goodbye: any code but 1000 and the terminal ones makes the connection reconnect.
  connection.socket?.close(4000, "dropping mid-stream");
  console.log("dropped the socket after delta 3");
  await ended;
  const reply = (await sealed).entry;
  const run = deltas.filter((d) => d.runId === runId);
  const seqs = run.map((d) => d.seq);
  if (!seqs.every((seq, i) => seq === i + 1))
    fail(`deltas after resume are not contiguous: ${seqs.join(",")}`);
  if (run.map((d) => d.text).join("") !== reply.text) fail("the streamed text differs from the stored reply");
  if (sockets < 1) fail("the connection did not reconnect after the drop");
  console.log(
    `resumed on a new socket: ${seqs.length} deltas in all, no gap, no duplicate, the stored text exactly`,
  );

  const before = await connection.branch();
  const userEntry = before.find((e) => e.role === "user");
  if (userEntry === undefined) fail("the branch has no user message");
  const edited = next(
    connection,
    "entry",
    (f) => f.entry.role === "assistant" && f.entry.id !== reply.id,
    "the reply to the edit",
  );
  connection.edit(userEntry.id, "Tell me something else.");
  const editedReply = (await edited).entry;
  await next(connection, "run", (f) => f.runId === editedReply.runId && f.status === "succeeded", "its end");
  const regenerated = next(
    connection,
    "entry",
    (f) => f.entry.role === "assistant" && ![reply.id, editedReply.id].includes(f.entry.id),
    "the regenerated reply",
  );
  connection.regenerate(editedReply.id);
  const regeneratedReply = (await regenerated).entry;
  await connection.sync();

  const original = await connection.branch(reply.id);
  const current = await connection.branch();
  connection.close();
  const show = (items) => items.map((e) => `${e.role}: ${JSON.stringify(e.text.slice(0, 40))}`).join(" → ");
  console.log(`original branch: ${show(original)}`);
  console.log(`current branch:  ${show(current)}`);
  if (original.length !== 2 || original[0].text !== "Tell me something.")
    fail("the original branch was not kept");
  if (
    current.length !== 2 ||
    current[0].text !== "Tell me something else." ||
    current[1].id !== regeneratedReply.id
  ) {
    fail("the current branch is not the edit with its regenerated reply");
  }
  console.log("ok: launch, stream, drop, resume, edit, regenerate and both branches read back");
  return 0;
}

if (isMain(import.meta.url)) runMain(main);
