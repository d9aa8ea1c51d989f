// `npm run webhook:check`: proves event webhooks end to end against a running `npm run dev` — a local receiver that
// fails twice, a turn over HTTP, and `thread.created` + `run.succeeded` verified with the reference library.
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";
import { CliError, runMain } from "./lib/cli.mjs";
import { describeError, request } from "./lib/http-client.mjs";
import { localPort } from "./lib/local-server.mjs";
import { readDemoState } from "./seed-demo.mjs";

const HELP = `Usage: npm run webhook:check [-- --port 8787 --timeout 60]

Against \`npm run dev\` on 127.0.0.1:<port> (PORT env or --port, default 8787): starts a receiver on a free
127.0.0.1 port that answers 500 to its first two requests, registers it as a webhook of the demo tenant
(.wrangler/demo.json), runs one turn with the demo agent over HTTP, and waits until thread.created and
run.succeeded arrived, each verified with the standardwebhooks library. Prints every request it received.
Exit 0 only if all of it worked; the webhook is deleted again either way.`;

const EVENTS = ["thread.created", "run.succeeded"];
const FAILURES_FIRST = 2;

/** A receiver on 127.0.0.1:<free port>: 500 to the first `FAILURES_FIRST` requests, 200 after; records each. */
function startReceiver() {
  const received = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const status = received.length < FAILURES_FIRST ? 500 : 200;
      received.push({
        headers: {
          "webhook-id": req.headers["webhook-id"] ?? "",
          "webhook-timestamp": req.headers["webhook-timestamp"] ?? "",
          "webhook-signature": req.headers["webhook-signature"] ?? "",
        },
        body: Buffer.concat(chunks).toString("utf8"),
        status,
        at: Date.now(),
      });
      res
        .writeHead(status, { "content-type": "text/plain" })
        .end(status === 200 ? "ok" : "failing on purpose");
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve({ server, received, port: server.address().port }));
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const port = Number(values.port ?? localPort());
  const timeoutMs = Number(values.timeout ?? "60") * 1000;
  const baseUrl = `http://127.0.0.1:${port}`;
  const origin = `http://localhost:${port}`;
  const demo = readDemoState();
  if (demo?.apiKey === undefined || demo.publicKey === undefined) {
    throw new CliError("no demo tenant in .wrangler/demo.json: start `npm run dev` first (it seeds one).");
  }

  const receiver = await startReceiver();
  const url = `http://127.0.0.1:${receiver.port}/hooks`;
  console.log(`receiver listening on ${url} (answers 500 to the first ${FAILURES_FIRST} requests)`);
  let webhookId;
  try {
    const created = await request(baseUrl, "POST", "/v1/webhooks", {
      token: demo.apiKey,
      body: { url, events: EVENTS, description: "webhook-check" },
    });
    if (created.status !== 201 || typeof created.body?.secret !== "string") {
      throw new CliError(`registering the webhook failed: ${describeError(created)}`);
    }
    webhookId = created.body.id;
    const wh = new Webhook(created.body.secret);
    console.log(`registered webhook ${webhookId} for ${EVENTS.join(", ")}`);

    const launched = await request(baseUrl, "POST", "/v1/agent-sessions", {
      body: { agentKey: demo.publicKey },
      headers: { Origin: origin },
    });
    if (launched.status !== 201) throw new CliError(`launch failed: ${describeError(launched)}`);
    const { threadId, token } = launched.body;
    const turn = await request(baseUrl, "POST", `/v1/threads/${threadId}/messages`, {
      token,
      headers: { Origin: origin },
      body: { clientMessageId: `check-${Date.now()}`, text: "Hello from webhook-check" },
      timeoutMs: 30_000,
    });
    if (turn.status !== 201 || turn.body?.run?.status !== "succeeded") {
      throw new CliError(`the turn did not succeed: ${describeError(turn)}`);
    }
    console.log(`turn on thread ${threadId}: run ${turn.body.run.id} succeeded`);

    const deadline = Date.now() + timeoutMs;
    const delivered = () =>
      receiver.received.filter((r) => r.status === 200).map((r) => wh.verify(r.body, r.headers));
    while (delivered().length < EVENTS.length) {
      if (Date.now() > deadline) {
        throw new CliError(
          `timed out: the receiver got ${receiver.received.length} requests, ${delivered().length} delivered`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const start = receiver.received[0]?.at ?? Date.now();
    for (const r of receiver.received) {
      const event = wh.verify(r.body, r.headers);
      console.log(
        `  +${String(((r.at - start) / 1000).toFixed(1)).padStart(5)} s  ${r.status}  webhook-id ${r.headers["webhook-id"]}  ${event.type}  (signature verified)`,
      );
    }
    const events = delivered();
    const types = events.map((e) => e.type);
    if (types.join() !== EVENTS.join())
      throw new CliError(`expected ${EVENTS.join(", ")} in order, got ${types.join(", ")}`);
    const first = receiver.received.slice(0, FAILURES_FIRST + 1).map((r) => r.headers["webhook-id"]);
    if (new Set(first).size !== 1) throw new CliError(`the retries changed webhook-id: ${first.join(", ")}`);
    if (events[0].data.threadId !== threadId || events[1].data.runId !== turn.body.run.id) {
      throw new CliError("the events name another thread or run");
    }

    const log = await request(baseUrl, "GET", `/v1/webhooks/${webhookId}/deliveries`, { token: demo.apiKey });
    if (log.status !== 200) throw new CliError(`reading the delivery log failed: ${describeError(log)}`);
    console.log("delivery log:");
    for (const d of log.body.items) {
      console.log(
        `  ${d.id}  ${d.eventType.padEnd(14)}  ${d.status}  attempts ${d.attempts}  last ${d.lastStatusCode}`,
      );
    }
    const createdLog = log.body.items.find((d) => d.eventType === "thread.created");
    if (createdLog?.status !== "succeeded" || createdLog.attempts !== FAILURES_FIRST + 1) {
      throw new CliError("the delivery log does not show thread.created delivered on the third attempt");
    }
    console.log(
      `webhook check passed: thread.created delivered on attempt ${FAILURES_FIRST + 1} with one webhook-id, run.succeeded after it.`,
    );
    return 0;
  } finally {
    if (webhookId !== undefined) {
      await request(baseUrl, "DELETE", `/v1/webhooks/${webhookId}`, { token: demo.apiKey }).catch(() => {});
    }
    receiver.server.close();
  }
}

await runMain(main);
