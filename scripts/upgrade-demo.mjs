// `npm run upgrade:demo`: a live thread moves from v1 to v2 of its agent, continues, forks above the change, and
// every reply's version, run and input digest are read back over HTTP and checked against its rebuilt, verified input.
import { parseArgs } from "node:util";
import { AdminClient, launchPublic, ThreadConnection } from "agent-threads/client";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { describeClientError } from "./lib/http-client.mjs";
import { localBaseUrl } from "./lib/local-server.mjs";
import { readDemoState } from "./seed-demo.mjs";

const HELP = `Usage: npm run upgrade:demo [-- --url http://localhost:8787]

Runs against a server started with \`npm run dev\` (the demo tenant's key is read from .wrangler/demo.json).
Creates an agent with two versions, releases v1, launches a thread, upgrades it to v2 with POST …/upgrade,
forks above the change, and checks each reply's version and input digest over HTTP. Exits 1 when a check fails.`;

const FULL_WEIGHT = 10_000;

const artifact = (instructions) => ({
  schemaVersion: 1,
  name: "Upgrade demo",
  instructions,
  model: { provider: "local", model: "echo", local: { chunks: 4, chunkDelayMs: 10 } },
});

/** Awaits one API call, or explains which call failed and how. */
async function step(what, call) {
  try {
    return await call;
  } catch (error) {
    throw new CliError(`${what} failed: ${describeClientError(error)}`);
  }
}

/**
 * Starts a turn with `start` (which returns its clientMessageId) and waits, over the frames it sees, for its user
 * message, the reply below it and that reply's run ending.
 */
async function turn(connection, what, start, timeoutMs = 15_000) {
  const entries = [];
  const runs = [];
  const offEntry = connection.on("entry", (frame) => entries.push(frame.entry));
  const offRun = connection.on("run", (frame) => runs.push(frame));
  try {
    const clientMessageId = start();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const user = entries.find((e) => e.role === "user" && e.clientMessageId === clientMessageId);
      const reply = user && entries.find((e) => e.role === "assistant" && e.parentId === user.id);
      const ended =
        reply && runs.find((r) => r.runId === reply.runId && r.status !== "queued" && r.status !== "running");
      if (ended) {
        if (ended.status !== "succeeded") throw new CliError(`${what}: its run ${ended.status}`);
        return { userEntry: user, reply, runId: reply.runId };
      }
      if (Date.now() > deadline) throw new CliError(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    offEntry();
    offRun();
  }
}

/** The thread's messages once the projection holds `replies` assistant messages, each with its digest. */
async function projectedMessages(admin, threadId, replies, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = [];
    let cursor;
    do {
      const page = await step(
        "Listing the messages",
        admin.sessions.messages(threadId, { limit: 100, ...(cursor ? { cursor } : {}) }),
      );
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const assistant = items.filter((m) => m.role === "assistant");
    if (assistant.length >= replies && assistant.every((m) => m.inputDigest !== null)) return items;
    if (Date.now() > deadline) {
      throw new CliError(`the projection holds ${assistant.length} of ${replies} replies with digests`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function main() {
  const { values } = parseArgs({
    options: { url: { type: "string" }, origin: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const baseUrl = values.url ?? localBaseUrl();
  const origin = values.origin ?? baseUrl;
  const state = readDemoState();
  if (state === null) throw new CliError("no .wrangler/demo.json: start `npm run dev` first.");
  const admin = new AdminClient({ baseUrl, apiKey: state.apiKey });

  const slug = `upgrade-demo-${Date.now().toString(36)}`;
  const agent = await step(
    "Creating the agent",
    admin.agents.create({ slug, name: "Upgrade demo", visibility: "public", allowedOrigins: [origin] }),
  );
  const first = await step(
    "Saving v1's draft",
    admin.drafts.put(agent.id, artifact("You are version one. Answer plainly."), 0),
  );
  const v1 = await step("Publishing v1", admin.versions.publish(agent.id, first.revision));
  const second = await step(
    "Saving v2's draft",
    admin.drafts.put(agent.id, artifact("You are version two. Answer warmly."), first.revision),
  );
  const v2 = await step("Publishing v2", admin.versions.publish(agent.id, second.revision));
  const release = await step(
    "Creating the release",
    admin.releases.create(agent.id, {
      environment: "development",
      allocations: [{ version: v1.version, weight: FULL_WEIGHT }],
    }),
  );
  await step("Activating the release", admin.releases.activate(agent.id, release.id));
  console.log(
    `agent ${agent.id}: v${v1.version} ${v1.digest.slice(0, 19)}…, v${v2.version} ${v2.digest.slice(0, 19)}…; v${v1.version} released`,
  );

  const session = await step("Launching", launchPublic({ baseUrl, agentKey: agent.publicKey, origin }));
  const connection = new ThreadConnection({ launch: session, origin, backoff: { initialMs: 100 } });
  const ready = await connection.connect();
  console.log(`thread ${session.threadId} on v${ready.agent.version}`);

  const one = await turn(connection, "the first turn", () => connection.send({ text: "Where is my order?" }));
  const upgraded = await step("Upgrading", admin.sessions.upgrade(session.threadId, v2.version));
  console.log(
    `POST …/upgrade → v${upgraded.fromVersion} → v${upgraded.toVersion} (entry ${upgraded.entryId})`,
  );
  const two = await turn(connection, "the turn after the upgrade", () =>
    connection.send({ text: "And when will it arrive?" }),
  );
  // Editing the first message forks above the version change: that branch keeps v1.
  const fork = await turn(connection, "the fork above the change", () =>
    connection.edit(one.userEntry.id, "Where is my parcel?"),
  );
  connection.close();

  const expected = new Map([
    [one.runId, { label: "first turn", version: v1.version }],
    [two.runId, { label: "after upgrade", version: v2.version }],
    [fork.runId, { label: "fork above", version: v1.version }],
  ]);
  const messages = await projectedMessages(admin, session.threadId, expected.size);
  const failures = [];
  console.log("");
  console.log(
    "reply            version  runId                                 inputDigest              audit",
  );
  for (const message of messages) {
    if (message.kind === "version_change") {
      console.log(`— version change (entry ${message.id}) —`);
      continue;
    }
    if (message.role !== "assistant") continue;
    const wanted = message.runId === null ? undefined : expected.get(message.runId);
    const label = wanted?.label ?? "unexpected";
    const input = await step(
      `Reading run ${message.runId}'s input`,
      admin.sessions.runInput(session.threadId, message.runId),
    );
    const checks = [
      [wanted !== undefined, "a run of this demo"],
      [message.version === wanted?.version, `message version v${wanted?.version}`],
      [input.verified === true, "verified"],
      [input.agentVersion === message.version, "agentVersion = message version"],
      [input.inputDigest === message.inputDigest, "digest = message digest"],
      [input.artifactDigest === (message.version === v2.version ? v2.digest : v1.digest), "artifact digest"],
    ];
    const failed = checks.filter(([passed]) => !passed).map(([, name]) => name);
    for (const name of failed) failures.push(`${label}: ${name}`);
    console.log(
      `${label.padEnd(16)} v${String(message.version).padEnd(7)} ${String(message.runId).padEnd(37)} ${String(message.inputDigest).slice(0, 23)}… ${
        failed.length === 0 ? `verified, agentVersion v${input.agentVersion}` : `FAILED: ${failed.join(", ")}`
      }`,
    );
    expected.delete(message.runId);
  }
  for (const { label } of expected.values()) failures.push(`${label}: its reply is not listed`);
  console.log("");
  if (failures.length > 0) {
    for (const failure of failures) console.error(`check failed: ${failure}`);
    return 1;
  }
  console.log(
    "ok: each reply names the version that produced it, and its rebuilt input verifies against its digest",
  );
  return 0;
}

if (isMain(import.meta.url)) await runMain(main);
