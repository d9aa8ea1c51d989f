// "Delete my conversations" in a real browser: from the past-conversations list, a confirm step, then
// DELETE /v1/me/threads; the widget forgets its threads and starts afresh, and the receipt verifies against the JWKS.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compactVerify, createRemoteJWKSet } from "jose";
import {
  API_KEY,
  BASE_URL,
  eventually,
  OTHER_ORIGIN,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForReply,
  waitForText,
} from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

let agentKey;
/** A fast echo agent that allows the customer's origin (the widget's calls are cross-origin, as embedded). */
function customerAgent() {
  agentKey ??= seedAgent(BASE_URL, API_KEY, {
    slug: `erase-${Date.now().toString(36)}`,
    visibility: "public",
    local: { chunks: 4, chunkDelayMs: 10 },
    origin: OTHER_ORIGIN,
  }).then((a) => a.publicKey);
  return agentKey;
}

async function openCustomerPage(browser) {
  const key = await customerAgent();
  const query = new URLSearchParams({ key, service: BASE_URL, persist: "session" });
  return openWidgetPage(browser, {
    reducedMotion: "reduce",
    url: `${OTHER_ORIGIN}/test/customer.html?${query}`,
  });
}

async function saved(page) {
  const key = await customerAgent();
  return page.evaluate((k) => JSON.parse(sessionStorage.getItem(`agent-threads:${k}`) ?? "{}"), key);
}

async function talk(page, text) {
  await send(page, text);
  await waitForReply(page, `Echo: ${text}`);
}

describe("delete my conversations", () => {
  const browser = useBrowser();

  it("confirms, erases the visitor's threads, resets the widget, and the receipt verifies", async () => {
    const { page, w, log } = await openCustomerPage(browser);
    await openAndConnect(page);
    await talk(page, "please forget this one");
    await page.getByRole("button", { name: "Start a new conversation" }).click();
    await waitForText(w.status, "Online");
    await talk(page, "and this one too");
    const before = await saved(page);
    assert.ok(before.visitorToken, "the widget keeps a visitor token");

    const pastButton = page.getByRole("button", { name: "Past conversations" });
    const items = page.getByRole("list", { name: "Past conversations" }).getByRole("button");
    await eventually(async () => {
      if ((await pastButton.getAttribute("aria-expanded")) === "true") await pastButton.click();
      await pastButton.click();
      await waitForText(page.locator("agent-thread .past"), /forget|this one|No past|could not/);
      return (await items.count()) === 2;
    }, "two past conversations");

    // Step one asks; nothing is deleted yet, and Cancel leaves everything as it was.
    await page.getByRole("button", { name: "Delete my conversations" }).click();
    await waitForText(page.locator("agent-thread .past p"), /cannot be undone/);
    await page.getByRole("button", { name: "Cancel" }).click();
    assert.equal(await items.count(), 2);
    await page.getByRole("button", { name: "Delete my conversations" }).click();

    const erased = page.waitForResponse(
      (res) => res.url().endsWith("/v1/me/threads") && res.request().method() === "DELETE",
    );
    await page.getByRole("button", { name: "Delete them" }).click();
    const res = await erased;
    assert.equal(res.status(), 200);
    const body = await res.json();
    assert.equal(body.threadIds.length, 2);

    // The widget is back to a fresh conversation with a new visitor.
    await eventually(
      async () => (await pastButton.getAttribute("aria-expanded")) === "false",
      "the list closed",
    );
    await waitForText(w.status, "Online");
    assert.equal(await w.userMessages.count(), 0);
    await eventually(async () => {
      const after = await saved(page);
      return after.visitorToken !== undefined && after.visitorToken !== before.visitorToken;
    }, "a new visitor token");
    const after = await saved(page);
    assert.ok(!body.threadIds.includes(after.threadId), "the new thread is not an erased one");

    // The receipt verifies against the service's published keys.
    const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", BASE_URL));
    const { payload, protectedHeader } = await compactVerify(body.receipt, jwks);
    assert.equal(protectedHeader.alg, "EdDSA");
    const receipt = JSON.parse(new TextDecoder().decode(payload));
    assert.equal(receipt.id, body.id);
    assert.deepEqual(receipt.threadIds, body.threadIds);
    assert.deepEqual(receipt.scope.kind, "me");

    // The old visitor's conversations are gone for good.
    await pastButton.click();
    await waitForText(page.locator("agent-thread .past"), /No past/);
    assert.deepEqual(log.errors, []);
  });
});
