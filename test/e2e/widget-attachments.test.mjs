// Browser tests of attachments in the widget (docs/widget.md#attachments): a picture dropped on the panel of a
// customer's page (another origin than the service) shows as a thumbnail, uploads, goes with the next message and the
// local model's reply names it; after a reload the message shows it again, fetched with the launch token. Refusals
// read as what happened, and the panel with a thumbnail is axe-clean. The tenant's console lists the file.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import { CONSOLE_KEYS, signIn } from "./console-helpers.mjs";
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

/** A 1×1 PNG: real bytes, so the service's signature check takes it. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const PNG_SHA = createHash("sha256").update(PNG).digest("hex");

let agentKey;
/** An echo agent that takes attachments (the default policy), allowed only on the customer's origin. */
function attachmentsAgent() {
  agentKey ??= seedAgent(BASE_URL, API_KEY, {
    slug: `attach-${Date.now().toString(36)}`,
    visibility: "public",
    local: { chunks: 4, chunkDelayMs: 20 },
    origin: OTHER_ORIGIN,
    presentation: { attachments: { enabled: true } },
  }).then((agent) => agent.publicKey);
  return agentKey;
}

/** The customer's page with the widget; `persist: session` so a reload of the tab shows the same thread. */
async function openCustomerPage(browser) {
  const query = new URLSearchParams({ key: await attachmentsAgent(), service: BASE_URL, persist: "session" });
  const opened = await openWidgetPage(browser, {
    url: `${OTHER_ORIGIN}/test/customer.html?${query}`,
    reducedMotion: "reduce",
  });
  await openAndConnect(opened.page);
  return opened;
}

/** Drops files on the panel as a person dragging them from their desktop would (a `drop` with a DataTransfer). */
async function dropFiles(page, files) {
  const panel = page.locator("agent-thread .panel");
  await panel.evaluate((el, list) => {
    const data = new DataTransfer();
    for (const { name, type, base64 } of list) {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      data.items.add(new File([bytes], name, { type }));
    }
    for (const type of ["dragenter", "dragover", "drop"])
      el.dispatchEvent(
        new DragEvent(type, { bubbles: true, cancelable: true, composed: true, dataTransfer: data }),
      );
  }, files);
}

const png = (name) => ({ name, type: "image/png", base64: PNG.toString("base64") });

/** True once `img` has decoded a picture (an object URL the page's CSP allows, of real image bytes). */
const loaded = (img) =>
  img.evaluate((el) => el.complete && el.naturalWidth > 0 && el.src.startsWith("blob:"));

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

describe("attachments in the widget", () => {
  const browser = useBrowser();

  it("takes a dropped picture: thumbnail, upload, sent with the message, named by the reply, shown again after a reload, listed in the console", async () => {
    const { page, log } = await openCustomerPage(browser);
    const attach = page.getByRole("button", { name: "Attach files" });
    await attach.waitFor({ state: "visible" });

    await dropFiles(page, [png("dot.png")]);
    const tray = page.getByRole("list", { name: "Files to send" });
    const thumb = tray.getByRole("img", { name: "dot.png" });
    await thumb.waitFor({ state: "visible" });
    assert.ok(await loaded(thumb), "the thumbnail shows the dropped picture");
    // Uploaded: the progress bar gives way to the remove button alone.
    await eventually(async () => (await tray.locator("progress").count()) === 0, "the upload to finish");
    await tray.getByRole("button", { name: "Remove dot.png" }).waitFor({ state: "visible" });
    await axe(page, "a thumbnail in the composer");

    await send(page, "What is in this picture?");
    const reply = await waitForReply(page, "Attachments:");
    assert.ok(
      reply.includes(`dot.png (image/png, ${PNG.length} bytes, sha256 ${PNG_SHA.slice(0, 12)})`),
      `the reply names the picture: ${reply}`,
    );
    assert.equal(await tray.isVisible(), false, "the tray empties once the message is sent");
    const sent = page.locator("agent-thread .msg.user").last().getByRole("img", { name: "dot.png" });
    assert.ok(await loaded(sent), "the message shows its picture");

    // A reload shows the thread from history: the picture is fetched with the launch token, never a token in a URL.
    const downloads = [];
    page.on("request", (request) => {
      if (request.url().includes("/attachments/")) downloads.push(request);
    });
    await page.reload();
    await openAndConnect(page);
    const again = page.locator("agent-thread .msg.user").last().getByRole("img", { name: "dot.png" });
    await again.waitFor({ state: "visible" });
    await eventually(() => loaded(again), "the picture fetched again after the reload");
    assert.equal(downloads.length, 1, "one download of the picture");
    assert.doesNotMatch(downloads[0].url(), /token|eyJ/, "no token in the download's URL");
    assert.match((await downloads[0].allHeaders()).authorization ?? "", /^Bearer /);
    await axe(page, "a message with its picture");
    assert.deepEqual(log.errors, []);

    // The tenant's console lists the conversation's file and downloads it through its session.
    const threadId = await page.evaluate(
      (key) => JSON.parse(sessionStorage.getItem(`agent-threads:${key}`) ?? "{}").threadId,
      await attachmentsAgent(),
    );
    assert.match(threadId ?? "", /^thr_/);
    const consolePage = await browser.context.newPage();
    browser.track(consolePage);
    await consolePage.goto(`${BASE_URL}/console/sessions/${threadId}`);
    await signIn(consolePage, CONSOLE_KEYS.read);
    const files = consolePage.getByRole("region", { name: "Files" });
    await waitForText(files, `dot.png`);
    await waitForText(files, `sha256 ${PNG_SHA.slice(0, 12)}`);
    const [download] = await Promise.all([
      consolePage.waitForEvent("download"),
      files.getByRole("button", { name: "Download dot.png" }).click(),
    ]);
    assert.equal(download.suggestedFilename(), "dot.png");
    assert.deepEqual(readFileSync(await download.path()), PNG);
    // …and the user message in the conversation carries it.
    await consolePage
      .getByRole("article", { name: "User message" })
      .getByRole("list", { name: "Attachments" })
      .getByRole("button", { name: `Download dot.png (image/png, ${PNG.length} bytes)` })
      .waitFor();
  });

  it("says why a file is refused (a type the agent does not take, bytes that are not what they claim) and takes a pasted one", async () => {
    const { page } = await openCustomerPage(browser);
    await page.getByRole("button", { name: "Attach files" }).waitFor({ state: "visible" });

    // Checked before any byte leaves: not in the agent's accepted types.
    await dropFiles(page, [
      { name: "notes.zip", type: "application/zip", base64: "UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA==" },
    ]);
    await waitForText(
      page.locator("agent-thread .notice"),
      "notes.zip cannot be sent: this type of file is not accepted.",
    );

    // Refused by the service (415 type_mismatch): the tray says so and offers to try again.
    await dropFiles(page, [
      { name: "fake.png", type: "image/png", base64: Buffer.from("not a png").toString("base64") },
    ]);
    const tray = page.getByRole("list", { name: "Files to send" });
    await waitForText(tray, "fake.png cannot be sent: this type of file is not accepted.");
    await tray.getByRole("button", { name: "Try again" }).waitFor({ state: "visible" });
    await axe(page, "a refused upload");

    // A message cannot leave with a failed file; removing it lets it go.
    await send(page, "hello");
    await waitForText(page.locator("agent-thread .notice"), "Wait until the files are uploaded");
    await tray.getByRole("button", { name: "Remove fake.png" }).click();

    // A picture pasted into the message box goes the same way as a dropped one.
    await page.getByRole("textbox", { name: "Message" }).evaluate((el, { name, base64 }) => {
      const data = new DataTransfer();
      data.items.add(
        new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type: "image/png" }),
      );
      el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    }, png("pasted.png"));
    await tray.getByRole("img", { name: "pasted.png" }).waitFor({ state: "visible" });
    await eventually(async () => (await tray.locator("progress").count()) === 0, "the upload to finish");
    await page.getByRole("button", { name: "Send message" }).click();
    const reply = await waitForReply(page, "hello");
    assert.match(reply, /pasted\.png \(image\/png/);
  });
});
