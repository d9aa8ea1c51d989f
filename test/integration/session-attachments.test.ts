// The tenant's view of a conversation's files (docs/api.md#attachments), as the console's session screen reads them:
// the list of a session's uploads and each one's bytes through the admin client; another tenant's session is 404.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AdminClient } from "../../src/client/index";
import { API } from "../helpers/tenants";
import { launch, liveAgent, ORIGIN } from "../helpers/threads";

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
const workerFetch = (input: string | URL | Request, init?: RequestInit) => exports.default.fetch(input, init);

describe("a session's attachments for the tenant", () => {
  it("lists the files uploaded to the conversation and downloads one; another tenant sees no such session", async () => {
    const agent = await liveAgent({ artifact: { attachments: { enabled: true } } });
    const session = await launch(agent.publicKey);
    const res = await workerFetch(`${API}/v1/threads/${session.threadId}/attachments`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${session.token}`,
        Origin: ORIGIN,
        "Content-Type": "image/png",
        "X-Attachment-Name": "screen%20shot.png",
      },
      body: PNG,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const ref = (await res.json()) as { id: string };

    const admin = new AdminClient({ baseUrl: API, fetch: workerFetch, apiKey: agent.apiKey });
    const { items } = await admin.sessions.attachments(session.threadId);
    expect(items).toEqual([
      {
        id: ref.id,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        mediaType: "image/png",
        size: PNG.length,
        name: "screen shot.png",
      },
    ]);
    const blob = await admin.sessions.downloadAttachment(session.threadId, ref.id);
    expect(blob.type).toBe("image/png");
    expect([...new Uint8Array(await blob.arrayBuffer())]).toEqual([...PNG]);

    const other = await liveAgent();
    const stranger = new AdminClient({ baseUrl: API, fetch: workerFetch, apiKey: other.apiKey });
    await expect(stranger.sessions.attachments(session.threadId)).rejects.toMatchObject({
      status: 404,
      code: "not_found",
    });
  });
});
