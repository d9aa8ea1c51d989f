// The operator's off switch against a real `wrangler dev`: a tenant created through the operator API, a visitor's
// open socket, then the tenant disabled — its key is refused, its launches too, and the socket closes with 4403.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdminClient, AgentThreadsError, launchPublic, OperatorClient } from "agent-threads/client";
import { BASE_URL, OPERATOR_TOKEN } from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

const ORIGIN = BASE_URL;

function launch(publicKey) {
  return launchPublic({ baseUrl: BASE_URL, agentKey: publicKey, origin: ORIGIN });
}

/** The AgentThreadsError a call fails with. */
async function refusal(promise) {
  const error = await promise.then(
    () => assert.fail("expected the call to be refused"),
    (e) => e,
  );
  assert.ok(error instanceof AgentThreadsError, String(error));
  return error;
}

/** Opens the thread's socket, says hello and resolves once `ready` arrived; `closed` resolves with the close. */
function openSocket(session) {
  const ws = new WebSocket(session.websocketUrl, {
    protocols: ["agent.v1", `bearer.${session.token}`],
    headers: { Origin: ORIGIN },
  });
  const closed = new Promise((resolve) => ws.addEventListener("close", (event) => resolve(event.code)));
  const ready = new Promise((resolve, reject) => {
    ws.addEventListener("open", () => ws.send(JSON.stringify({ type: "hello", protocol: 1 })));
    ws.addEventListener("message", (event) => {
      if (JSON.parse(String(event.data)).type === "ready") resolve();
    });
    ws.addEventListener("error", () => reject(new Error("the WebSocket did not open")));
  });
  return { ws, closed, ready };
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("a tenant disabled by the operator", () => {
  it("loses its key, its launches and its open sockets, and gets them back when enabled", async () => {
    assert.ok(OPERATOR_TOKEN, "run with `npm run test:e2e` (it passes the server's operator token)");
    const operator = new OperatorClient({ baseUrl: BASE_URL, operatorToken: OPERATOR_TOKEN });
    const { tenantId, apiKey } = await operator.createTenant("Disabled later");
    const admin = new AdminClient({ baseUrl: BASE_URL, apiKey });
    const agent = await seedAgent(BASE_URL, apiKey, {
      slug: "switched-off",
      visibility: "public",
      local: { chunks: 3, chunkDelayMs: 10 },
      origin: ORIGIN,
    });

    const socket = openSocket(await launch(agent.publicKey));
    await withTimeout(socket.ready, 15_000, "ready");

    const disabled = await operator.updateTenant(tenantId, { status: "disabled" });
    assert.equal(disabled.status, "disabled");

    assert.equal(await withTimeout(socket.closed, 15_000, "the socket to close"), 4403);
    const agents = await refusal(admin.agents.list());
    assert.deepEqual([agents.status, agents.code], [401, "unauthenticated"]);
    const refused = await refusal(launch(agent.publicKey));
    assert.deepEqual([refused.status, refused.code], [403, "forbidden"]);

    const listed = await operator.listTenants({ limit: 200 });
    assert.equal(listed.items.find((t) => t.id === tenantId)?.status, "disabled");

    const enabled = await operator.updateTenant(tenantId, { status: "active" });
    assert.equal(enabled.status, "active");
    assert.deepEqual(
      (await admin.agents.list()).items.map((a) => a.id),
      [agent.id],
    );
    const reopened = openSocket(await launch(agent.publicKey));
    await withTimeout(reopened.ready, 15_000, "ready after enabling");
    reopened.ws.close();
  });
});
