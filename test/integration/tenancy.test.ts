// Two tenants with the same end-user id never reach each other's threads, whatever they put in a request.
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { privateLaunchRequest, readToken, tenantFootprint, threadObjects } from "../helpers/edge-gate";
import { threadStub } from "../helpers/projection";
import { API, expectError, json } from "../helpers/tenants";
import {
  clientMessageId,
  connect,
  type Launch,
  type LiveAgent,
  launchResponse,
  liveAgent,
} from "../helpers/threads";
import { forgeToken } from "../helpers/tokens";
import { waitFor } from "../helpers/wait-for";

const entriesBody = z.object({ items: z.array(z.object({ role: z.string().nullable(), text: z.string() })) });
const infoBody = z.object({ threadId: z.string(), agent: z.object({ id: z.string() }) });

async function launchFor(agent: LiveAgent, subject: string, threadId?: string): Promise<Launch> {
  const body = { agentId: agent.agentId, subject, ...(threadId !== undefined ? { threadId } : {}) };
  return json(await privateLaunchRequest(agent.apiKey, body), 201, launchResponse);
}

function threadHttp(threadId: string, token: string, path = ""): Promise<Response> {
  return exports.default.fetch(`${API}/v1/threads/${threadId}${path}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
}

/** Two tenants, each with a private agent and a thread for its end user `user-1` holding one exchange. */
async function twoTenants() {
  const a = await liveAgent({ agent: { visibility: "private" } });
  const b = await liveAgent({ agent: { visibility: "private" } });
  const threadA = await launchFor(a, "user-1");
  const threadB = await launchFor(b, "user-1");
  for (const [session, text] of [
    [threadA, "secret of tenant A"],
    [threadB, "secret of tenant B"],
  ] as const) {
    const ws = await connect(session, { origin: "https://shop.example.com" });
    ws.send({ type: "send", clientMessageId: clientMessageId(), text });
    await ws.next("run", (f) => f.status === "succeeded");
    ws.ws.close();
  }
  return { a, b, threadA, threadB };
}

describe("two tenants, one end-user id", () => {
  it("gives each tenant's user-1 a different thread in a different object", async () => {
    const objects = await threadObjects();
    const { a, b, threadA, threadB } = await twoTenants();
    expect(threadA.threadId).not.toBe(threadB.threadId);
    expect(readToken(threadA.token).claims).toMatchObject({ sub: "user-1", tenantId: a.tenantId });
    expect(readToken(threadB.token).claims).toMatchObject({ sub: "user-1", tenantId: b.tenantId });
    expect(await threadObjects()).toBe(objects + 2);

    const own = await json(await threadHttp(threadA.threadId, threadA.token, "/entries"), 200, entriesBody);
    expect(own.items.map((e) => e.text)).toContain("secret of tenant A");
    expect(JSON.stringify(own)).not.toContain("tenant B");
    const info = await json(await threadHttp(threadB.threadId, threadB.token), 200, infoBody);
    expect(info.agent.id).toBe(b.agentId);
  });

  it("never answers 200 to one tenant's token on the other tenant's thread", async () => {
    const { threadA, threadB } = await twoTenants();
    for (const path of ["", "/entries", "/entries?leafId=x"]) {
      for (const [token, threadId] of [
        [threadA.token, threadB.threadId],
        [threadB.token, threadA.threadId],
      ] as const) {
        const res = await threadHttp(threadId, token, path);
        const text = await res.text();
        expect([401, 403, 404]).toContain(res.status);
        expect(text).not.toContain("secret of tenant");
      }
    }
  });

  it("refuses a token naming the other tenant's thread or agent even when correctly signed", async () => {
    const { a, b, threadA, threadB } = await twoTenants();
    const claimsA: Record<string, unknown> = { ...readToken(threadA.token).claims };
    const objects = await threadObjects();
    const crossed: Record<string, unknown>[] = [
      { ...claimsA, threadId: threadB.threadId },
      { ...claimsA, agentEntityId: b.agentId },
      { ...claimsA, agentEntityId: b.agentId, threadId: threadB.threadId },
      { ...claimsA, tenantId: b.tenantId },
      { ...claimsA, tenantId: b.tenantId, threadId: threadB.threadId },
    ];
    for (const claims of crossed) {
      const token = await forgeToken({ claims });
      const res = await threadHttp(String(claims.threadId), token, "/entries");
      const text = await res.text();
      expect([401, 403, 404], text).toContain(res.status);
      expect(text).not.toContain("secret of tenant");
    }
    // The full set of B's claims is the only way in: the edge derives the object from verified claims alone.
    const claimsB = readToken(threadB.token).claims;
    const fullB = await forgeToken({ claims: { ...claimsB, tenantId: a.tenantId } });
    expect([401, 403, 404]).toContain((await threadHttp(threadB.threadId, fullB)).status);
    // The edge refuses every crossed agent or tenant (the gate cache knows no such agent). The one name it cannot
    // refuse alone, A's agent with B's thread id, reaches an object that was never launched: it finds no registry row,
    // refuses, and erases itself, so it holds no pin, no owner and no entries (docs/decisions.md, "Connect path").
    expect(await threadObjects()).toBeLessThanOrEqual(objects + 1);
    const crossedStub = await threadStub(a, threadB.threadId);
    const held = await waitFor(
      () =>
        runInDurableObject(crossedStub, (_i, state) =>
          Number(
            state.storage.sql
              .exec(
                "SELECT (SELECT COUNT(*) FROM pin) + (SELECT COUNT(*) FROM meta WHERE key LIKE 'owner_%') AS n",
              )
              .one().n,
          ),
        ),
      (n) => n === 0,
      { what: "the crossed object to hold nothing" },
    );
    expect(held).toBe(0);
  });

  it("answers a resume of the other tenant's thread with 404 and stores nothing", async () => {
    const { a, b, threadB } = await twoTenants();
    const before = await tenantFootprint(a.tenantId);
    const beforeB = await tenantFootprint(b.tenantId);
    await expectError(
      await privateLaunchRequest(a.apiKey, {
        agentId: a.agentId,
        subject: "user-1",
        threadId: threadB.threadId,
      }),
      404,
      "not_found",
    );
    await expectError(
      await privateLaunchRequest(a.apiKey, {
        agentId: b.agentId,
        subject: "user-1",
        threadId: threadB.threadId,
      }),
      401,
      "unauthenticated",
    );
    expect(await tenantFootprint(a.tenantId)).toEqual(before);
    expect(await tenantFootprint(b.tenantId)).toEqual(beforeB);
  });

  it("keeps two users of one tenant apart: user-2 never reads user-1's thread", async () => {
    const { a, threadA } = await twoTenants();
    await expectError(
      await privateLaunchRequest(a.apiKey, {
        agentId: a.agentId,
        subject: "user-2",
        threadId: threadA.threadId,
      }),
      404,
      "not_found",
    );
    const user2 = await launchFor(a, "user-2");
    const res = await threadHttp(threadA.threadId, user2.token, "/entries");
    expect([401, 403, 404]).toContain(res.status);
    // A correctly signed token for user-2 on user-1's thread is refused: the registry names the owner.
    const forged = await forgeToken({ claims: { ...readToken(threadA.token).claims, sub: "user-2" } });
    await expectError(await threadHttp(threadA.threadId, forged, "/entries"), 401, "unauthenticated");
  });
});
