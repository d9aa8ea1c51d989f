// The tenant's whole loop in the console, in one signed-in browser: create an agent, edit its draft (a schema error
// shown at its field, then fixed), hear the draft in the playground, publish two versions, release them 50/50 and
// activate, chat on the demo page with the agent's key, find that conversation in the console with its tree, erase it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdminClient } from "agent-threads/client";
import { CONSOLE_KEYS, checkScreen, signIn, useConsoleBrowser, waitForHeading } from "./console-helpers.mjs";
import {
  API_KEY,
  BASE_URL,
  eventually,
  openWidgetPage,
  send,
  useBrowser,
  waitForReply,
  waitForText,
  widget,
} from "./helpers.mjs";

const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

/** The artifact the loop types into the JSON view: valid but for the accent colour. */
const artifact = (greeting, accentColor) => ({
  schemaVersion: 1,
  name: "Loop agent",
  instructions: "Echo the visitor.",
  model: { provider: "local", model: "echo", local: { chunks: 4, chunkDelayMs: 10 } },
  greeting,
  widget: { accentColor },
});

describe("the console's whole loop", () => {
  const consoleBrowser = useConsoleBrowser();
  const widgetBrowser = useBrowser();

  it("creates, drafts, previews, publishes, releases 50/50, chats, finds the session's tree and erases it", async () => {
    const { page } = await consoleBrowser.open({ path: "/console/agents" });
    await signIn(page, CONSOLE_KEYS.admin);
    await page.getByRole("table", { name: "Agents" }).waitFor();

    // Create the agent, public on this origin (the demo page's).
    const slug = `loop-${Date.now().toString(36)}`;
    await page.getByRole("button", { name: "New agent" }).click();
    await page.getByLabel("Name").fill("Loop agent");
    await page.getByLabel("Slug").fill(slug);
    await page.getByLabel(/^Public/).check();
    await page.getByLabel("Allowed origins").fill(BASE_URL);
    await page.getByRole("button", { name: "Create agent" }).click();
    await waitForHeading(page, "Loop agent");
    const agent = (await admin.agents.list({ limit: 200 })).items.find((a) => a.slug === slug);
    assert.ok(agent, "the console created the agent");
    assert.equal(new URL(page.url()).pathname, `/console/agents/${agent.id}`);

    // The draft: a schema error shown at its field, fixed in the form, saved.
    await page.getByRole("navigation", { name: "This agent" }).getByRole("link", { name: "Draft" }).click();
    await page.getByRole("tab", { name: "JSON" }).click();
    await page
      .getByLabel("Artifact JSON")
      .fill(JSON.stringify(artifact("Hello from the loop", "red"), null, 2));
    await page.getByRole("tab", { name: "Form" }).click();
    const accent = page.getByLabel("Accent colour", { exact: true });
    await waitForText(page.locator("[id='field-widget.accentColor-error']"), "must be a colour as #rrggbb");
    assert.equal(await accent.getAttribute("aria-invalid"), "true");
    await checkScreen(page, "loop-draft-error");
    await accent.fill("#0f766e");
    assert.equal(await page.locator("[id='field-widget.accentColor-error']").count(), 0);
    await page.getByRole("button", { name: "Save draft" }).click();
    await waitForText(page.getByRole("status"), "Saved as revision");
    const first = await admin.drafts.get(agent.id);
    assert.equal(first.definition.widget.accentColor, "#0f766e");

    // The playground: the draft answers in the real widget before anything is published.
    await page
      .getByRole("navigation", { name: "This agent" })
      .getByRole("link", { name: "Playground" })
      .click();
    const draftFrame = page.frameLocator(
      `iframe[title="Widget talking to draft revision ${first.revision}"]`,
    );
    await waitForText(draftFrame.locator("agent-thread .intro"), "Hello from the loop");
    // Nothing is released yet: the draft is all there is to talk to.
    await waitForText(page.locator(".frames"), "No active release in development");
    await page.getByLabel("Prompt for the draft").fill("Are you the draft?");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await waitForText(
      draftFrame.locator("agent-thread .msg.assistant .bubble"),
      "Echo: Are you the draft?",
      30_000,
    );

    // Publish it as version 1; a second revision as version 2.
    await page
      .getByRole("navigation", { name: "This agent" })
      .getByRole("link", { name: "Versions" })
      .click();
    await page.getByRole("button", { name: `Publish revision ${first.revision}` }).click();
    await waitForText(page.getByRole("status"), `Published draft revision ${first.revision} as version 1`);
    await page.getByRole("navigation", { name: "This agent" }).getByRole("link", { name: "Draft" }).click();
    await page.getByLabel("Greeting", { exact: true }).fill("Hello from version 2");
    await page.getByRole("button", { name: "Save draft" }).click();
    await waitForText(page.getByRole("status"), `Saved as revision ${first.revision + 1}`);
    await page
      .getByRole("navigation", { name: "This agent" })
      .getByRole("link", { name: "Versions" })
      .click();
    await page.getByRole("button", { name: `Publish revision ${first.revision + 1}` }).click();
    await waitForText(
      page.getByRole("status"),
      `Published draft revision ${first.revision + 1} as version 2`,
    );

    // Release both 50/50 in development and activate it, confirmed.
    await page
      .getByRole("navigation", { name: "This agent" })
      .getByRole("link", { name: "Releases" })
      .click();
    await page.getByRole("button", { name: "Add a version" }).click();
    assert.equal(await page.getByRole("slider", { name: "Weight of version 1" }).inputValue(), "5000");
    assert.equal(await page.getByRole("slider", { name: "Weight of version 2" }).inputValue(), "5000");
    await page.getByRole("button", { name: "Create release for development" }).click();
    await waitForText(page.getByRole("status"), "Created a release for development");
    const row = page.getByRole("row", { name: /version \d 50 %, version \d 50 %/ });
    await row.getByRole("button", { name: /^Activate/ }).click();
    const dialog = page.getByRole("dialog", { name: "Activate this release in development?" });
    await dialog.getByRole("button", { name: "Activate" }).click();
    await waitForText(page.getByRole("status"), "Activated in development");
    const active = (await admin.releases.list(agent.id)).items.find((r) => r.active);
    assert.deepEqual(active.allocations.map((a) => a.weight).sort(), [5000, 5000]);

    // A visitor chats on the demo page with the agent's public key.
    const demo = await openWidgetPage(widgetBrowser, {
      path: "/demo.html",
      key: agent.publicKey,
      query: { persist: "memory" },
    });
    await demo.page.getByRole("button", { name: "Talk to the demo agent" }).click();
    await widget(demo.page).panel.waitFor({ state: "visible" });
    await send(demo.page, "Hello from the loop's visitor");
    await waitForReply(demo.page, "Echo: Hello from the loop's visitor");

    // The console finds that conversation and shows it as its tree.
    const session = await eventually(async () => {
      const page1 = await admin.sessions.list({ agentId: agent.id });
      return page1.items.find((s) => s.messageCount >= 2) ?? page1.items[0];
    }, "the conversation's session row");
    await page.getByRole("link", { name: "Sessions" }).first().click();
    await page.goto(`${BASE_URL}/console/sessions/${session.threadId}`);
    await waitForHeading(page, "Hello from the loop's visitor");
    const conversation = page.getByRole("list", { name: /^Messages of branch 1/ });
    await waitForText(conversation, "Echo: Hello from the loop's visitor");
    await checkScreen(page, "loop-session");

    // Erase it, confirmed: gone from the API.
    await page.getByRole("button", { name: "Erase…" }).click();
    await page
      .getByRole("dialog", { name: "Erase this conversation?" })
      .getByRole("button", { name: "Erase conversation" })
      .click();
    await waitForHeading(page, "Conversation erased");
    await assert.rejects(admin.sessions.get(session.threadId), (error) => error.status === 404);
  });
});
