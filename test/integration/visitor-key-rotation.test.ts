// Visitor tokens rotate by `kid`: the current visitor key signs, previous ones still verify, retired or removed kids
// are refused, and a deployment whose VISITOR_TOKEN_KEY is still one plain secret keeps its visitors.
import { describe, expect, it } from "vitest";
import { allThreadRows, fetchWithEnv, readToken } from "../helpers/edge-gate";
import { expectError, json } from "../helpers/tenants";
import { freshIp, launchResponse, liveAgent, ORIGIN } from "../helpers/threads";

const OLD = "dGVzdC12aXNpdG9yLWtleS0wMTIzNDU2Nzg5YWJjZGVmZ2g";
const NEW = "dGVzdC12aXNpdG9yLWtleS10d28tMDEyMzQ1Njc4OWFiY2Q";

/** The value VISITOR_TOKEN_KEY had before it rotated: one plain secret. */
const PLAIN = OLD;
/** The same key moved into a key set under the kid plain values sign as, with a new current key. */
/** Step one of a rotation: the new key is added, the old one still signs. */
const ADDED = JSON.stringify({ current: "v1", keys: { v1: OLD, v2: NEW } });
const ROTATED = JSON.stringify({ current: "v2", keys: { v1: OLD, v2: NEW } });
const RETIRED = JSON.stringify({ current: "v2", keys: { v1: OLD, v2: NEW }, retired: ["v1"] });
const REMOVED = JSON.stringify({ current: "v2", keys: { v2: NEW } });

/** A browser launch of a public agent under one VISITOR_TOKEN_KEY value. */
function launchWith(visitorKey: string, body: Record<string, unknown>): Promise<Response> {
  return fetchWithEnv({ VISITOR_TOKEN_KEY: visitorKey }, "/v1/agent-sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
    body: JSON.stringify(body),
  });
}

async function firstVisit(visitorKey: string) {
  const agent = await liveAgent();
  const first = await json(await launchWith(visitorKey, { agentKey: agent.publicKey }), 201, launchResponse);
  return { agent, first, visitorToken: first.visitorToken! };
}

describe("visitor key rotation", () => {
  it("signs with kid v1 and resumes while VISITOR_TOKEN_KEY is one plain secret", async () => {
    const { agent, first, visitorToken } = await firstVisit(PLAIN);
    expect(readToken(visitorToken).header).toMatchObject({ kid: "v1", typ: "agent-visitor+jwt" });
    const resumed = await launchWith(PLAIN, {
      agentKey: agent.publicKey,
      threadId: first.threadId,
      visitorToken,
    });
    expect((await json(resumed, 201, launchResponse)).threadId).toBe(first.threadId);
  });

  it("keeps resuming a visitor's thread after the plain key moves into a key set with a new current kid", async () => {
    const { agent, first, visitorToken } = await firstVisit(PLAIN);
    const resumed = await json(
      await launchWith(ROTATED, { agentKey: agent.publicKey, threadId: first.threadId, visitorToken }),
      201,
      launchResponse,
    );
    expect(resumed.threadId).toBe(first.threadId);
    expect(readToken(resumed.token).claims.sub).toBe(readToken(first.token).claims.sub);

    // New visitors are signed with the current kid, and those tokens verify too.
    const fresh = await json(await launchWith(ROTATED, { agentKey: agent.publicKey }), 201, launchResponse);
    expect(readToken(fresh.visitorToken!).header.kid).toBe("v2");
    const again = await launchWith(ROTATED, {
      agentKey: agent.publicKey,
      threadId: fresh.threadId,
      visitorToken: fresh.visitorToken,
    });
    expect(again.status).toBe(201);
  });

  it.each([
    ["retired", RETIRED],
    ["removed", REMOVED],
  ])("refuses a visitor token whose kid was %s with 401, storing nothing", async (_case, config) => {
    const { agent, first, visitorToken } = await firstVisit(ADDED);
    expect(readToken(visitorToken).header.kid).toBe("v1");
    const rows = await allThreadRows();
    for (const body of [
      { agentKey: agent.publicKey, threadId: first.threadId, visitorToken },
      { agentKey: agent.publicKey, visitorToken },
    ]) {
      await expectError(await launchWith(config, body), 401, "unauthenticated");
    }
    expect(await allThreadRows()).toBe(rows);
  });
});
