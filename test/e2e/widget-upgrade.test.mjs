// A per-thread upgrade (docs/api.md) in a real browser: the version change shows as a quiet divider in the
// transcript, live when the tenant upgrades the thread and again in the history after a reload; passes axe.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import { AdminClient } from "agent-threads/client";
import { describeError, request } from "../../scripts/lib/http-client.mjs";
import {
  API_KEY,
  BASE_URL,
  OTHER_ORIGIN,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForReply,
  waitForText,
} from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

const HOST_PAGE = `${OTHER_ORIGIN}/test/customer.html`;
const FAST = { chunks: 12, chunkDelayMs: 25 };
const OWN_TAB = { persist: "session" };
const admin = () => new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

async function talk(page, text) {
  await send(page, text);
  await waitForReply(page, `Echo: ${text}`);
}

async function axe(page, what) {
  for (const colorScheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme });
    const result = await new AxeBuilder({ page })
      .include("agent-thread")
      .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
      .analyze();
    const violations = result.violations.map(
      (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    );
    assert.deepEqual(violations, [], `axe (${what}, ${colorScheme})`);
  }
}

describe("a per-thread upgrade", () => {
  const browser = useBrowser();

  it("shows a version change as a quiet divider, live and after a reload", async () => {
    // Needs the server's side of upgrades (docs/api.md): POST /v1/sessions/:id/upgrade.
    const slug = `upgrade-${Date.now().toString(36)}`;
    const agent = await seedAgent(BASE_URL, API_KEY, {
      slug,
      visibility: "public",
      local: FAST,
      origin: OTHER_ORIGIN,
    });
    const draft = await admin().drafts.put(
      agent.id,
      {
        schemaVersion: 1,
        name: "Demo agent",
        instructions: "Echo the visitor, newer.",
        model: { provider: "local", model: "echo", local: FAST },
      },
      1,
    );
    const v2 = await admin().versions.publish(agent.id, draft.revision);
    assert.equal(v2.version, 2);
    const query = new URLSearchParams({ key: agent.publicKey, service: BASE_URL, ...OWN_TAB });
    const { page } = await openWidgetPage(browser, {
      reducedMotion: "reduce",
      url: `${HOST_PAGE}?${query}`,
    });
    await openAndConnect(page);
    await talk(page, "before the upgrade");
    const { threadId } = await page.evaluate(
      (k) => JSON.parse(sessionStorage.getItem(`agent-threads:${k}`) ?? "{}"),
      agent.publicKey,
    );
    const res = await request(BASE_URL, "POST", `/v1/sessions/${threadId}/upgrade`, {
      token: API_KEY,
      body: { version: 2 },
    });
    assert.equal(res.status, 200, describeError(res));
    const divider = page.locator("agent-thread .vc");
    await waitForText(divider, "Updated to a new version");
    await talk(page, "after the upgrade");
    await axe(page, "version divider");

    await page.reload();
    await openAndConnect(page);
    await waitForText(page.locator("agent-thread .vc"), "Updated to a new version");
    assert.equal(await page.locator("agent-thread .vc").count(), 1);
  });
});
