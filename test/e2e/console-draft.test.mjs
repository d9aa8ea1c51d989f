// The console's draft editor, playground, versions and releases in Chromium against the e2e server: a schema error
// shown at its field and fixed, a stale save resolved both ways, the draft talking in the real widget beside the
// active version, publishing, a 50/50 release activated after confirmation, axe on every screen, and screenshots.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { AdminClient } from "agent-threads/client";
import {
  CONSOLE_KEYS,
  checkScreen,
  cspViolations,
  PHONE,
  signIn,
  useConsoleBrowser,
} from "./console-helpers.mjs";
import { API_KEY, BASE_URL, RESULTS, waitForText } from "./helpers.mjs";

const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

const artifact = (fields = {}) => ({
  schemaVersion: 1,
  name: "Draft tools agent",
  instructions: "Echo the visitor.",
  model: { provider: "local", model: "echo", local: { chunks: 4, chunkDelayMs: 10 } },
  ...fields,
});

/** A fresh agent whose version 1 (greeting "Hello from version 1") is all of development's traffic. */
async function agentWithVersion1() {
  const agent = await admin.agents.create({
    slug: `draft-tools-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`,
    name: "Draft tools agent",
    visibility: "public",
    allowedOrigins: [BASE_URL],
  });
  const saved = await admin.drafts.put(agent.id, artifact({ greeting: "Hello from version 1" }), 0);
  const version = await admin.versions.publish(agent.id, saved.revision);
  const release = await admin.releases.create(agent.id, {
    environment: "development",
    allocations: [{ version: version.version, weight: 10_000 }],
  });
  await admin.releases.activate(agent.id, release.id);
  return agent;
}

/** A new browser context at a console path, signed in with `key` (the admin console key unless told). */
async function openConsole(browser, path, { viewport, key = CONSOLE_KEYS.admin } = {}) {
  const opened = await browser.open({ path: `/console${path}`, ...(viewport ? { viewport } : {}) });
  await signIn(opened.page, key);
  await opened.page.locator("#page-title").waitFor();
  return opened;
}

/** Nothing the page did was refused by its CSP or Trusted Types, and no script failed. */
async function assertClean({ page, log }) {
  assert.deepEqual(await cspViolations(page), []);
  assert.deepEqual(log.errors, []);
}

/** A full-page picture for review, beside the ones `checkScreen` takes. */
async function screenshot(page, name) {
  mkdirSync(join(RESULTS, "console"), { recursive: true });
  await page.screenshot({ path: join(RESULTS, "console", `${name}.png`), fullPage: true });
}

const field = (page, label) => page.getByLabel(label, { exact: true });

describe("console draft editor", () => {
  const browser = useConsoleBrowser();
  let agent;
  before(async () => {
    agent = await agentWithVersion1();
  });

  it("shows a schema error at its field and in the JSON view, and saves once it is fixed", async () => {
    const opened = await openConsole(browser, `/agents/${agent.id}/draft`);
    const { page } = opened;
    const before = await admin.drafts.get(agent.id);
    await waitForText(page.locator("main"), `Revision ${before.revision}`);

    const accent = field(page, "Accent colour");
    await accent.fill("red");
    const accentError = page.locator("[id='field-widget.accentColor-error']");
    await waitForText(accentError, "must be a colour as #rrggbb");
    assert.equal(await accent.getAttribute("aria-invalid"), "true");
    assert.match(await accent.getAttribute("aria-describedby"), /field-widget\.accentColor-error/);
    await waitForText(page.getByRole("region", { name: "1 problem in the draft" }), "widget.accentColor");
    await checkScreen(page, "draft-error");

    // The JSON view holds the same value, and the problem's path takes focus back to its field.
    await page.getByRole("tab", { name: "JSON" }).click();
    const json = page.getByLabel("Artifact JSON");
    assert.match(await json.inputValue(), /"accentColor": "red"/);
    await page.getByRole("button", { name: "widget.accentColor" }).click();
    await page.waitForFunction(() => document.activeElement?.id === "field-widget.accentColor");

    // Fixed in the JSON: the form follows, the error goes.
    await page.getByRole("tab", { name: "JSON" }).click();
    const text = (await json.inputValue()).replace('"accentColor": "red"', '"accentColor": "#0f766e"');
    await json.fill(text.replace('"name": ', '"name" '));
    await waitForText(page.locator("#draft-json-error"), "Not valid JSON");
    await json.fill(text.replace("Echo the visitor.", "Echo every visitor."));
    assert.equal(await page.locator("#draft-json-error").count(), 0);
    await page.getByRole("tab", { name: "Form" }).click();
    assert.equal(await field(page, "Accent colour").inputValue(), "#0f766e");
    assert.equal(await accentError.count(), 0);
    assert.equal(await page.locator(".issues").count(), 0);
    await field(page, "Greeting").fill("Hello from the draft");

    await page.getByRole("button", { name: "Save draft" }).click();
    await waitForText(page.getByRole("status"), `Saved as revision ${before.revision + 1}`);
    const after = await admin.drafts.get(agent.id);
    assert.equal(after.revision, before.revision + 1);
    assert.equal(after.definition.widget.accentColor, "#0f766e");
    assert.equal(after.definition.instructions, "Echo every visitor.");
    assert.equal(after.definition.greeting, "Hello from the draft");
    await assertClean(opened);
  });

  it("shows what changed when the draft was saved elsewhere, and overwrites or reloads", async () => {
    const opened = await openConsole(browser, `/agents/${agent.id}/draft`);
    const { page } = opened;
    const start = await admin.drafts.get(agent.id);
    await waitForText(page.locator("main"), `Revision ${start.revision}`);
    await field(page, "Greeting").fill("Mine");
    // Someone saves behind the page's back.
    await admin.drafts.put(agent.id, { ...start.definition, greeting: "Theirs" }, start.revision);

    await page.getByRole("button", { name: "Save draft" }).click();
    const conflict = page.getByRole("region", { name: "The draft was saved elsewhere" });
    await conflict.waitFor();
    const row = conflict.getByRole("row", { name: /greeting/ });
    await waitForText(row, '"Theirs"');
    await waitForText(row, '"Mine"');
    await checkScreen(page, "draft-conflict");
    await page.getByRole("button", { name: "Overwrite with mine" }).click();
    await waitForText(page.getByRole("status"), `Saved as revision ${start.revision + 2}`);
    assert.equal(await conflict.count(), 0);
    let stored = await admin.drafts.get(agent.id);
    assert.equal(stored.revision, start.revision + 2);
    assert.equal(stored.definition.greeting, "Mine");

    // Again, and this time the other save wins.
    await admin.drafts.put(agent.id, { ...stored.definition, greeting: "Theirs again" }, stored.revision);
    await field(page, "Greeting").fill("Mine again");
    await page.getByRole("button", { name: "Save draft" }).click();
    await conflict.waitFor();
    await page.getByRole("button", { name: `Load revision ${stored.revision + 1} (discard mine)` }).click();
    assert.equal(await field(page, "Greeting").inputValue(), "Theirs again");
    await waitForText(page.getByRole("status"), `Loaded revision ${stored.revision + 1}`);
    stored = await admin.drafts.get(agent.id);
    assert.equal(stored.definition.greeting, "Theirs again");

    // Put the draft back for the playground.
    await field(page, "Greeting").fill("Hello from the draft");
    await page.getByRole("button", { name: "Save draft" }).click();
    await waitForText(page.getByRole("status"), "Saved as revision");
    await assertClean(opened);
  });

  it("shows the server's refusal of a publish at the field it names", async () => {
    const other = await agentWithVersion1();
    const draft = await admin.drafts.get(other.id);
    // Valid JSON Schema, refused by the server's own rules: local options with another provider.
    await admin.drafts.put(
      other.id,
      artifact({ model: { provider: "anthropic", model: "claude", local: { chunks: 2 } } }),
      draft.revision,
    );
    const { page } = await openConsole(browser, `/agents/${other.id}/draft`);
    await page.getByRole("button", { name: `Publish revision ${draft.revision + 1}` }).click();
    await waitForText(page.locator(".issues"), "model.local");
    await waitForText(page.locator(".issues"), "(from the server)");
    await waitForText(page.locator("[id='field-model-error']"), "only allowed with provider 'local'");
  });

  it("talks to the draft in the real widget beside the active version", async () => {
    const opened = await openConsole(browser, `/agents/${agent.id}/playground`);
    const { page } = opened;
    const draft = await admin.drafts.get(agent.id);
    const draftFrame = page.frameLocator(
      `iframe[title="Widget talking to draft revision ${draft.revision}"]`,
    );
    const versionFrame = page.frameLocator('iframe[title="Widget talking to version 1"]');
    await waitForText(draftFrame.locator("agent-thread .intro"), "Hello from the draft", 30_000);
    await waitForText(versionFrame.locator("agent-thread .intro"), "Hello from version 1", 30_000);

    await page.getByLabel("Prompt for both conversations").fill("Which one are you?");
    await page.getByRole("button", { name: "Send to both" }).click();
    await waitForText(
      draftFrame.locator("agent-thread .msg.assistant .bubble"),
      "Echo: Which one are you?",
      30_000,
    );
    await waitForText(
      versionFrame.locator("agent-thread .msg.assistant .bubble"),
      "Echo: Which one are you?",
      30_000,
    );
    await checkScreen(page, "playground");
    await assertClean(opened);
  });

  it("publishes the draft, compares versions, and activates a 50/50 release after confirming", async () => {
    const draft = await admin.drafts.get(agent.id);
    const opened = await openConsole(browser, `/agents/${agent.id}/versions`);
    const { page } = opened;
    await page.getByRole("button", { name: `Publish revision ${draft.revision}` }).click();
    await waitForText(page.getByRole("status"), `Published draft revision ${draft.revision} as version 2`);
    await page.getByRole("row", { name: /^2 / }).waitFor();
    await page.getByLabel("From", { exact: true }).selectOption("1");
    await page.getByLabel("To", { exact: true }).selectOption("2");
    await page.getByRole("button", { name: "Compare" }).click();
    const greeting = page.getByRole("row", { name: /^greeting/ });
    await waitForText(greeting, '"Hello from version 1"');
    await waitForText(greeting, '"Hello from the draft"');
    await page.getByRole("button", { name: "View version 2" }).click();
    await waitForText(page.locator("pre.artifact"), '"greeting": "Hello from the draft"');
    await checkScreen(page, "versions");

    await page.getByRole("link", { name: "Releases" }).click();
    await page.getByRole("heading", { name: /^Releases/ }).waitFor();
    await waitForText(page.locator("main"), "version 1 100 %");
    await page.getByRole("button", { name: "Add a version" }).click();
    const first = page.getByRole("slider", { name: "Weight of version 1" });
    const second = page.getByRole("slider", { name: "Weight of version 2" });
    assert.equal(await first.inputValue(), "5000");
    assert.equal(await second.inputValue(), "5000");
    // The keyboard moves one by 1 % a press and the other follows, always summing to 100 %.
    await first.focus();
    await page.keyboard.press("ArrowRight");
    assert.equal(await first.inputValue(), "5100");
    assert.equal(await second.inputValue(), "4900");
    assert.equal(await first.getAttribute("aria-valuetext"), "51 % (5100 of 10000)");
    await page.keyboard.press("ArrowLeft");
    assert.equal(await first.inputValue(), "5000");
    assert.equal(await second.inputValue(), "5000");

    await page.getByRole("button", { name: "Create release for development" }).click();
    await waitForText(page.getByRole("status"), "Created a release for development");
    const created = page.getByRole("row", { name: /version 1 50 %, version 2 50 %/ });
    await waitForText(created, "Never activated");
    await created.getByRole("button", { name: /^Activate/ }).click();
    const dialog = page.getByRole("dialog", { name: "Activate this release in development?" });
    await dialog.waitFor();
    await waitForText(dialog, "version 1 50 %, version 2 50 %");
    // Focus starts on Cancel; the page behind is inert.
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel");
    await checkScreen(page, "release-confirm");
    await dialog.getByRole("button", { name: "Activate" }).click();
    await dialog.waitFor({ state: "hidden" });
    await waitForText(page.getByRole("row", { name: /version 1 50 %, version 2 50 %/ }), "Active");
    await waitForText(page.getByRole("status"), "Activated in development");
    await screenshot(page, "releases");

    const active = (await admin.releases.list(agent.id)).items.find(
      (r) => r.active && r.environment === "development",
    );
    assert.deepEqual(
      active.allocations.map((a) => [a.version, a.weight]),
      [
        [1, 5000],
        [2, 5000],
      ],
    );
    await assertClean(opened);
  });

  it("fits a phone's width on every screen", async () => {
    const shown = {
      draft: (page) => field(page, "Name"),
      playground: (page) => page.locator("iframe").first(),
      versions: (page) => page.getByRole("button", { name: "View version 1" }),
      releases: (page) => page.getByRole("slider").first(),
    };
    for (const [screen, ready] of Object.entries(shown)) {
      const { page } = await openConsole(browser, `/agents/${agent.id}/${screen}`, {
        viewport: PHONE,
      });
      await ready(page).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      assert.equal(overflow, 0, `${screen} scrolls sideways by ${overflow}px`);
      // axe at this width once, on the screen whose layout changes most (the weight rows stack).
      if (screen === "releases") await checkScreen(page, "releases-phone");
      else await screenshot(page, `${screen}-phone`);
      await page.close();
    }
  });
});

describe("console draft tools with a read-only key", () => {
  const browser = useConsoleBrowser();

  it("shows the draft, versions and releases and offers no change", async () => {
    const agent = await agentWithVersion1();
    const { page } = await openConsole(browser, `/agents/${agent.id}/draft`, { key: CONSOLE_KEYS.read });
    await waitForText(page.locator("main"), "read-only key");
    assert.equal(await field(page, "Greeting").inputValue(), "Hello from version 1");
    assert.equal(await field(page, "Greeting").isDisabled(), true);
    assert.equal(await page.getByRole("button", { name: "Save draft" }).isDisabled(), true);
    await page.getByRole("tab", { name: "JSON" }).click();
    assert.equal(await page.getByLabel("Artifact JSON").getAttribute("readonly"), "");

    await page.getByRole("link", { name: "Versions" }).click();
    await page.getByRole("button", { name: "View version 1" }).waitFor();
    assert.equal(await page.getByRole("button", { name: /^Publish revision/ }).isDisabled(), true);

    await page.getByRole("link", { name: "Releases" }).click();
    await waitForText(page.locator("main"), "version 1 100 %");
    assert.equal(await page.getByRole("button", { name: /^Create release/ }).count(), 0);
    await checkScreen(page, "releases-read-only");
  });
});
