// Thread HTTP from a page on the service's own host (like the demo page): browsers send no Origin on a same-origin
// GET, so `Sec-Fetch-Site: same-origin` stands for the request's own origin — and that origin must still be allowed.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { converse, drainThread, threadStub } from "../helpers/projection";
import { expectError } from "../helpers/tenants";
import { launch, liveAgent, ORIGIN } from "../helpers/threads";

const OTHER = "https://other.example.com";

function get(url: string, token: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(url, { headers: { Authorization: `Bearer ${token}`, ...headers } });
}

async function visitor() {
  const agent = await liveAgent();
  const session = await launch(agent.publicKey);
  await converse(session, ["hello from the service's own page"]);
  await drainThread(await threadStub(agent, session.threadId));
  return session;
}

const SAME = { "Sec-Fetch-Site": "same-origin" };

describe("thread HTTP from a same-origin page", () => {
  it("answers /v1/me/threads and entries when the browser says the page is on the allowed origin", async () => {
    const session = await visitor();
    const list = await get(`${ORIGIN}/v1/me/threads`, session.token, SAME);
    expect(list.status).toBe(200);
    const body = (await list.json()) as { items: { threadId: string }[] };
    expect(body.items.map((t) => t.threadId)).toEqual([session.threadId]);
    const entries = await get(`${ORIGIN}/v1/threads/${session.threadId}/entries`, session.token, SAME);
    expect(entries.status).toBe(200);
  });

  it("still refuses no Origin without that word from the browser, or from another site", async () => {
    const session = await visitor();
    const url = `${ORIGIN}/v1/me/threads`;
    await expectError(await get(url, session.token), 403, "forbidden");
    for (const site of ["cross-site", "same-site", "none", "SAME-ORIGIN"]) {
      await expectError(await get(url, session.token, { "Sec-Fetch-Site": site }), 403, "forbidden");
    }
  });

  it("refuses a same-origin request on a host the agent does not allow, or with a token for another origin", async () => {
    const session = await visitor();
    await expectError(await get("http://api.test/v1/me/threads", session.token, SAME), 403, "forbidden");
    const both = await liveAgent({ agent: { allowedOrigins: [ORIGIN, OTHER] } });
    const elsewhere = await launch(both.publicKey, {}, OTHER);
    await expectError(await get(`${ORIGIN}/v1/me/threads`, elsewhere.token, SAME), 403, "forbidden");
    // A real Origin header always wins over Fetch Metadata.
    await expectError(
      await get(`${ORIGIN}/v1/me/threads`, session.token, { ...SAME, Origin: "https://evil.test" }),
      403,
      "forbidden",
    );
  });
});
