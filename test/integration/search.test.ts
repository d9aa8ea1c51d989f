// POST /v1/sessions/search with q (docs/api.md#analytics-and-search): full-text search over one tenant's message text
// with a snippet per session, combined with the list's filters, safe for any text, forgetting erased and expired
// text, and never taking the words or the end user's id in a URL.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runRetentionJob } from "../../src/jobs/retention";
import { listResponse } from "../../src/shared/api";
import { sessionListItem } from "../../src/shared/sessions-api";
import { tenantToken } from "../../src/storage/d1/search-terms";
import { converse, drainThread, launchFor, secondAgent, threadStub } from "../helpers/projection";
import { api, createApiKey, expectError, fieldPaths, json } from "../helpers/tenants";
import { type LiveAgent, liveAgent } from "../helpers/threads";

const DAY_MS = 86_400_000;
const list = listResponse(sessionListItem);

type SearchBody = Record<string, unknown>;

function post(agent: LiveAgent, body: SearchBody, key = agent.apiKey) {
  return api("/v1/sessions/search", { method: "POST", key, body });
}

async function search(agent: LiveAgent, body: SearchBody, key = agent.apiKey) {
  return json(await post(agent, body, key), 200, list);
}

const q = (text: string): SearchBody => ({ q: text });

async function conversation(agent: LiveAgent, subject: string, texts: string[]) {
  const session = await launchFor(agent, subject);
  await converse(session, texts);
  await drainThread(await threadStub(agent, session.threadId));
  return session.threadId;
}

/** The projected text of one entry, to check what a match points at. */
async function contentOf(tenantId: string, threadId: string, entryId: string) {
  const row = await env.DB.prepare(
    "SELECT content FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND id = ?",
  )
    .bind(tenantId, threadId, entryId)
    .first();
  return z.object({ content: z.string() }).parse(row).content;
}

async function indexedRows(threadId: string) {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM agent_messages_fts WHERE session_id = ?")
    .bind(threadId)
    .first();
  return z.object({ n: z.number() }).parse(row).n;
}

describe("POST /v1/sessions/search", () => {
  it("finds a word in the tenant's messages, with the matching message and a snippet around it", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    const refund = await conversation(agent, "user-1", [
      "Where is my refund for order 1234? It has been weeks.",
    ]);
    const shipping = await conversation(agent, "user-2", ["Do you ship to Canada?"]);
    const theirs = await conversation(other, "user-1", [
      "Where is my refund for order 1234? It has been weeks.",
    ]);

    const found = await search(agent, q("refund"));
    expect(found.items.map((i) => i.threadId)).toEqual([refund]);
    const match = found.items[0]?.match;
    expect(match?.snippet.toLowerCase()).toContain("refund");
    expect((await contentOf(agent.tenantId, refund, match?.entryId ?? "")).toLowerCase()).toContain("refund");
    // The item is the session as the list shows it, plus the match.
    expect(found.items[0]).toMatchObject({ threadId: refund, agentId: agent.agentId, subject: "user-1" });

    // Case and accents fold; every word must appear; a read key may search.
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    expect((await search(agent, q("REFÚND order"), reader.apiKey)).items.map((i) => i.threadId)).toEqual([
      refund,
    ]);
    expect((await search(agent, q("refund canada"))).items).toEqual([]);
    expect((await search(agent, q("canada"))).items.map((i) => i.threadId)).toEqual([shipping]);

    // The other tenant's identical text is theirs alone.
    expect((await search(other, q("refund"))).items.map((i) => i.threadId)).toEqual([theirs]);
    expect((await search(agent, q("refund"))).items.map((i) => i.threadId)).not.toContain(theirs);
  });

  it("combines with agentId and subject, and pages without repeating a session", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const billing = await secondAgent(agent);
    const one = await conversation(agent, "user-1", ["my invoice is wrong"]);
    const two = await conversation(agent, "user-2", ["the invoice total looks odd"]);
    const three = await conversation(billing, "user-1", ["please resend the invoice"]);

    const all = await search(agent, q("invoice"));
    expect(new Set(all.items.map((i) => i.threadId))).toEqual(new Set([one, two, three]));
    expect(
      (await search(agent, { ...q("invoice"), agentId: billing.agentId })).items.map((i) => i.threadId),
    ).toEqual([three]);
    expect(
      (await search(agent, { ...q("invoice"), agentId: agent.agentId, subject: "user-1" })).items.map(
        (i) => i.threadId,
      ),
    ).toEqual([one]);

    // One session per page: newest match first, each session once, then no cursor.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search(agent, {
        ...q("invoice"),
        limit: 1,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      seen.push(...page.items.map((i) => i.threadId));
      cursor = page.nextCursor;
    } while (cursor !== undefined && seen.length < 10);
    expect(seen).toEqual(all.items.map((i) => i.threadId));
    expect(seen).toHaveLength(3);
    // A search cursor continues only that search.
    const first = await search(agent, { ...q("invoice"), limit: 1 });
    await expectError(
      await post(agent, { ...q("total"), limit: 1, cursor: first.nextCursor ?? "" }),
      400,
      "bad_request",
    );
  });

  it("treats FTS5 syntax in q as plain text and refuses a query over 200 characters", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const thread = await conversation(agent, "user-1", ["refund or exchange, near the store"]);
    for (const text of [
      '"',
      '"refund',
      "refund*",
      "*",
      "refund OR canada",
      "NEAR(refund exchange",
      "NEAR(refund, 1)",
      "body:refund",
      "tenant : anything",
      "^refund",
      "-refund",
      "refund AND",
      "(",
      "'",
      "{tenant body}: refund",
      "refund NOT exchange",
    ]) {
      const res = await post(agent, q(text));
      expect(res.status, text).toBe(200);
    }
    // Operators are words: OR is not a disjunction, NOT is not a negation.
    expect((await search(agent, q("refund OR canada"))).items).toEqual([]);
    expect((await search(agent, q("refund NOT exchange"))).items).toEqual([]);
    expect((await search(agent, q("refund or exchange"))).items.map((i) => i.threadId)).toEqual([thread]);
    expect((await search(agent, q("NEAR(refund"))).items.map((i) => i.threadId)).toEqual([thread]);
    // Text with no words matches nothing.
    expect((await search(agent, q('"*"'))).items).toEqual([]);

    const error = await expectError(await post(agent, q("a".repeat(201))), 400, "bad_request");
    expect(fieldPaths(error)).toContain("q");
    expect((await post(agent, q("a".repeat(200)))).status).toBe(200);
  });

  it("finds words in any script and either accent encoding, indexed only under the tenant's own terms", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    // "Müller" with a combining diaeresis (NFD), Cyrillic and Greek words, a CJK run.
    const thread = await conversation(agent, "user-1", ["Herr Mu\u0308ller: Привет, καλημέρα! 東京"]);
    const theirs = await conversation(other, "user-1", ["Привет"]);
    for (const text of ["müller", "MULLER", "Mu\u0308ller", "привет", "ПРИВЕТ", "καλημέρα", "東京"]) {
      expect(
        (await search(agent, q(text))).items.map((i) => i.threadId),
        text,
      ).toEqual([thread]);
    }
    expect((await search(other, q("привет"))).items.map((i) => i.threadId)).toEqual([theirs]);
    // The index's text is terms that carry the tenant's key, never a bare word another tenant could match.
    const { results } = await env.DB.prepare("SELECT body FROM agent_messages_fts WHERE session_id = ?")
      .bind(thread)
      .all<{ body: string }>();
    const words = results.flatMap((r) => r.body.split(" "));
    expect(words.length).toBeGreaterThan(0);
    for (const word of words) expect(word.startsWith(tenantToken(agent.tenantId))).toBe(true);
  });

  it("never indexes one tenant's text under another tenant's term, whatever marks it holds", async () => {
    const attacker = await liveAgent({ agent: { visibility: "private" } });
    const victim = await liveAgent({ agent: { visibility: "private" } });
    const victimTerm = `${tenantToken(victim.tenantId)}invoice`;
    // U+0903 is a mark to a JS regex but a separator to FTS5: cut as one word, the text after it became a term of its
    // own, spelled as the victim's term.
    const planted = await conversation(attacker, "user-1", [`x\u0903${victimTerm} x\u064b${victimTerm}`]);
    const own = await conversation(victim, "user-1", ["Please resend the invoice"]);
    const matches = await env.DB.prepare(
      "SELECT tenant_id AS tenantId, session_id AS threadId FROM agent_messages_fts WHERE agent_messages_fts MATCH ?",
    )
      .bind(`"${victimTerm}"`)
      .all<{ tenantId: string; threadId: string }>();
    // The victim's message and the local model's echo of it; nothing of the attacker's.
    expect(matches.results).toEqual([
      { tenantId: victim.tenantId, threadId: own },
      { tenantId: victim.tenantId, threadId: own },
    ]);
    expect((await search(victim, q("invoice"))).items.map((i) => i.threadId)).toEqual([own]);
    // The attacker's text is still searchable, under its own terms.
    expect((await search(attacker, q(`x\u0903${victimTerm}`))).items.map((i) => i.threadId)).toEqual([
      planted,
    ]);
  });

  it("forgets erased and retention-expired text", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { limits: { retention: { maxMessagesPerThread: 2 } } },
    });
    const erased = await conversation(agent, "user-1", ["my parcel never arrived"]);
    const expiring = await conversation(agent, "user-2", ["an old parcel question", "second", "third"]);
    expect(new Set((await search(agent, q("parcel"))).items.map((i) => i.threadId))).toEqual(
      new Set([erased, expiring]),
    );

    expect((await api(`/v1/sessions/${erased}`, { method: "DELETE", key: agent.apiKey })).status).toBe(204);
    expect(await indexedRows(erased)).toBe(0);
    expect((await search(agent, q("parcel"))).items.map((i) => i.threadId)).toEqual([expiring]);

    // The retention job keeps the newest two messages; the parcel question is older.
    await runRetentionJob(env, Date.now() + 2 * DAY_MS);
    expect((await search(agent, q("parcel"))).items).toEqual([]);
    expect((await search(agent, q("third"))).items.map((i) => i.threadId)).toEqual([expiring]);
    expect(await indexedRows(expiring)).toBe(2);
  });
});

describe("session list filters that name an end user (docs/privacy.md#end-user-ids-stay-out-of-urls)", () => {
  it("lists by subject through the body: the GET list's items and order, paged with its cursors", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const older = await conversation(agent, "user-7", ["first question"]);
    const newer = await conversation(agent, "user-7", ["second question"]);
    const someoneElse = await conversation(agent, "user-8", ["unrelated"]);

    // The unfiltered list is the same through either form.
    const listed = await json(
      await api(`/v1/sessions?agentId=${agent.agentId}`, { key: agent.apiKey }),
      200,
      list,
    );
    expect(new Set(listed.items.map((i) => i.threadId))).toEqual(new Set([older, newer, someoneElse]));
    expect((await search(agent, { agentId: agent.agentId })).items).toEqual(listed.items);

    // By subject: that user's sessions only, newest first, a read key allowed.
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    const mine = await search(agent, { subject: "user-7" }, reader.apiKey);
    expect(mine.items.map((i) => i.threadId)).toEqual(
      listed.items.map((i) => i.threadId).filter((t) => t !== someoneElse),
    );
    expect(mine.items.every((i) => i.subject === "user-7")).toBe(true);

    // Paged one at a time through the body, each session once, then no cursor.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search(agent, {
        subject: "user-7",
        limit: 1,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      expect(page.items).toHaveLength(1);
      seen.push(...page.items.map((i) => i.threadId));
      cursor = page.nextCursor;
    } while (cursor !== undefined && seen.length < 10);
    expect(seen).toEqual(mine.items.map((i) => i.threadId));

    // A cursor continues only the list of the same filters, from either form.
    const firstGet = await json(
      await api(`/v1/sessions?agentId=${agent.agentId}&limit=1`, { key: agent.apiKey }),
      200,
      list,
    );
    const continued = await search(agent, { agentId: agent.agentId, limit: 1, cursor: firstGet.nextCursor });
    expect(continued.items.map((i) => i.threadId)).toEqual([listed.items[1]?.threadId]);
    await expectError(
      await post(agent, { agentId: agent.agentId, subject: "user-7", limit: 1, cursor: firstGet.nextCursor }),
      400,
      "bad_request",
    );
  });

  it("takes a strict body: unknown keys and out-of-range limits are 400s naming the field", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    // An unknown key is named in the details (zod reports it at the body's root).
    const unknown = await expectError(await post(agent, { subjectId: "user-1" }), 400, "bad_request");
    expect(JSON.stringify(unknown.details)).toContain("subjectId");
    for (const limit of [0, 201, 1.5, "5"]) {
      const error = await expectError(await post(agent, { subject: "user-1", limit }), 400, "bad_request");
      expect(fieldPaths(error), String(limit)).toContain("limit");
    }
    expect((await post(agent, { subject: "user-1", limit: 200 })).status).toBe(200);
    // A JSON body, nothing else.
    const text = await api("/v1/sessions/search", {
      method: "POST",
      key: agent.apiKey,
      body: "subject=user-1",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    await expectError(text, 415, "unsupported_media_type");
  });

  it("answers 410 naming the search route to GET with subject or q, echoing neither", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    await conversation(agent, "person@example.com", ["my refund"]);
    for (const query of [
      "subject=person%40example.com",
      "q=refund",
      `agentId=${agent.agentId}&subject=person%40example.com&limit=5`,
      "subject=",
    ]) {
      for (const key of [agent.apiKey, undefined]) {
        const res = await api(`/v1/sessions?${query}`, key === undefined ? {} : { key });
        const error = await expectError(res, 410, "gone");
        expect(error.message, query).toContain("POST /v1/sessions/search");
        expect(error.message).not.toContain("person");
        expect(error.message).not.toContain("refund");
      }
    }
    // The filters that name no one still work in the URL.
    expect(
      (await api(`/v1/sessions?agentId=${agent.agentId}&mode=agent`, { key: agent.apiKey })).status,
    ).toBe(200);
  });
});
