// The operator's off switch against a real `wrangler dev`: a tenant created through the operator API, a visitor's
// open socket, then the tenant disabled — its key is refused, its launches too, and the socket closes with 4403.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { request } from "../../scripts/lib/http-client.mjs";
import { BASE_URL, OPERATOR_TOKEN } from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

const ORIGIN = BASE_URL;

function launch(publicKey) {
  return request(BASE_URL, "POST", "/v1/agent-sessions", {
    body: { agentKey: publicKey },
    headers: { Origin: ORIGIN },
  });
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
    const tenant = await request(BASE_URL, "POST", "/v1/operator/tenants", {
      token: OPERATOR_TOKEN,
      body: { name: "Disabled later" },
    });
    assert.equal(tenant.status, 201);
    const { tenantId, apiKey } = tenant.body;
    const agent = await seedAgent(BASE_URL, apiKey, {
      slug: "switched-off",
      visibility: "public",
      local: { chunks: 3, chunkDelayMs: 10 },
      origin: ORIGIN,
    });

    const launched = await launch(agent.publicKey);
    assert.equal(launched.status, 201);
    const socket = openSocket(launched.body);
    await withTimeout(socket.ready, 15_000, "ready");

    const disable = await request(BASE_URL, "PATCH", `/v1/operator/tenants/${tenantId}`, {
      token: OPERATOR_TOKEN,
      body: { status: "disabled" },
    });
    assert.equal(disable.status, 200);
    assert.equal(disable.body.status, "disabled");

    assert.equal(await withTimeout(socket.closed, 15_000, "the socket to close"), 4403);
    const agents = await request(BASE_URL, "GET", "/v1/agents", { token: apiKey });
    assert.equal(agents.status, 401);
    assert.equal(agents.body.error.code, "unauthenticated");
    const refused = await launch(agent.publicKey);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, "forbidden");

    const listed = await request(BASE_URL, "GET", "/v1/operator/tenants?limit=200", {
      token: OPERATOR_TOKEN,
    });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.items.find((t) => t.id === tenantId)?.status, "disabled");

    const enable = await request(BASE_URL, "PATCH", `/v1/operator/tenants/${tenantId}`, {
      token: OPERATOR_TOKEN,
      body: { status: "active" },
    });
    assert.equal(enable.status, 200);
    assert.equal((await request(BASE_URL, "GET", "/v1/agents", { token: apiKey })).status, 200);
    const again = await launch(agent.publicKey);
    assert.equal(again.status, 201);
    const reopened = openSocket(again.body);
    await withTimeout(reopened.ready, 15_000, "ready after enabling");
    reopened.ws.close();
  });
});
