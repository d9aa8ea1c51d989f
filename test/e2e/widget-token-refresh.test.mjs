// Token refresh in a real browser: a minute before its launch token expires, an open widget asks the thread for a new
// one on its socket (`refresh` → `token`) instead of launching again, and keeps talking on the same socket.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { eventually, openAndConnect, openWidgetPage, send, useBrowser, waitForReply } from "./helpers.mjs";

describe("token refresh", () => {
  const browser = useBrowser();

  it("renews the token on the socket, with no second launch", async () => {
    // The page's clock is fake (the server's is real), so four minutes pass at once.
    await browser.context.clock.install();
    const { page } = await openWidgetPage(browser);
    const launches = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/v1/agent-sessions")
        launches.push(request.url());
    });
    const sent = [];
    const received = [];
    page.on("websocket", (ws) => {
      ws.on("framesent", (frame) => sent.push(String(frame.payload)));
      ws.on("framereceived", (frame) => received.push(String(frame.payload)));
    });
    await openAndConnect(page);
    assert.equal(launches.length, 1, "the widget launched once to connect");

    await browser.context.clock.fastForward("04:10");
    await eventually(() => received.some((f) => f.includes('"type":"token"')), "a token frame", {
      timeout: 10_000,
      interval: 50,
    });
    assert.ok(
      sent.some((f) => JSON.parse(f).type === "refresh"),
      "a refresh frame was sent",
    );
    const token = received.map((f) => JSON.parse(f)).find((f) => f.type === "token");
    assert.ok(token, "the thread answered with a token frame");
    assert.ok(token.token.split(".").length === 3 && Date.parse(token.expiresAt) > Date.now());
    assert.equal(launches.length, 1, "no launch was made to refresh");

    // The socket goes on as before.
    await send(page, "still here after the refresh");
    assert.equal(
      await waitForReply(page, "Echo: still here after the refresh"),
      "Echo: still here after the refresh",
    );
    assert.equal(launches.length, 1);
  });
});
