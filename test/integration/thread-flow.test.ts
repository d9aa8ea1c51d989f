// A whole conversation through the edge gate: launch, connect, send, stream, seal, and read back over HTTP.
import { describe, expect, it } from "vitest";
import { api } from "../helpers/tenants";
import { clientMessageId, connect, launch, liveAgent } from "../helpers/threads";

describe("a thread conversation", () => {
  it("streams a reply from the local model and stores both turns", async () => {
    const agent = await liveAgent({
      artifact: { model: { provider: "local", model: "echo", local: { chunks: 5 } } },
    });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const cmid = clientMessageId();
    ws.send({ type: "send", clientMessageId: cmid, text: "hello there" });
    const user = await ws.next("entry", (f) => f.entry.role === "user");
    expect(user.entry).toMatchObject({ text: "hello there", clientMessageId: cmid, parentId: null });
    const done = await ws.next("run", (f) => f.status === "succeeded");
    const deltas = ws.all("delta").filter((d) => d.runId === done.runId);
    expect(deltas.map((d) => d.seq)).toEqual([1, 2, 3, 4, 5]);
    const assistant = await ws.next("entry", (f) => f.entry.role === "assistant");
    expect(assistant.entry.text).toBe(deltas.map((d) => d.text).join(""));
    expect(assistant.entry.parentId).toBe(user.entry.id);

    const entries = await api(`/v1/threads/${session.threadId}/entries`, {
      headers: { Authorization: `Bearer ${session.token}`, Origin: "https://shop.example.com" },
    });
    expect(entries.status).toBe(200);
    const body = (await entries.json()) as { items: { id: string; role: string }[] };
    expect(body.items.map((e) => e.role)).toEqual(["user", "assistant"]);
    ws.ws.close();
  });
});
