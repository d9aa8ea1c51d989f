// The console's Evals screen in Chromium against the e2e server: a case made from a real conversation's branch, a
// stale suite save shown as a conflict, the suite run on the draft and the active version side by side with the
// per-case diff, a release refused by the gate, the draft fixed and passing, and the release going through.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, describe, it } from "node:test";
import { AdminClient } from "agent-threads/client";
import { request } from "../../scripts/lib/http-client.mjs";
import { CONSOLE_KEYS, checkScreen, cspViolations, signIn, useConsoleBrowser } from "./console-helpers.mjs";
import { API_KEY, BASE_URL, eventually, waitForText } from "./helpers.mjs";

const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

/** `echo` answers "Echo: <the message>"; `lorem` answers filler: the regression the suite must catch. */
const artifact = (model, instructions = "Answer about orders.") => ({
  schemaVersion: 1,
  name: "Evals agent",
  instructions,
  model: { provider: "local", model, local: { chunks: 2, chunkDelayMs: 0 } },
});

/** Version 1 (echo) is all of development's traffic; one conversation happened on it. */
async function seed() {
  const agent = await admin.agents.create({
    slug: `evals-${randomBytes(4).toString("hex")}`,
    name: "Evals agent",
    visibility: "private",
    allowedOrigins: [],
  });
  const saved = await admin.drafts.put(agent.id, artifact("echo"), 0);
  const v1 = await admin.versions.publish(agent.id, saved.revision);
  const release = await admin.releases.create(agent.id, {
    environment: "development",
    allocations: [{ version: v1.version, weight: 10_000 }],
  });
  await admin.releases.activate(agent.id, release.id);
  const launch = await admin.launch({
    agentId: agent.id,
    subject: `evals-${randomBytes(4).toString("hex")}`,
  });
  const res = await request(BASE_URL, "POST", `/v1/threads/${launch.threadId}/messages`, {
    token: launch.token,
    body: { clientMessageId: `cm_${randomBytes(8).toString("hex")}`, text: "Where is order 42?" },
    timeoutMs: 30_000,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  await eventually(
    async () => (await admin.sessions.messages(launch.threadId)).items.length >= 2,
    "the projection",
  );
  return { agent, threadId: launch.threadId };
}

async function openConsole(browser, path) {
  const opened = await browser.open({ path: `/console${path}` });
  await signIn(opened.page, CONSOLE_KEYS.admin);
  await opened.page.locator("#page-title").waitFor();
  return opened;
}

/** Reads the cases editor, changes the cases, writes them back. */
async function editCases(page, change) {
  const box = page.getByLabel("Cases (JSON)");
  const cases = JSON.parse(await box.inputValue());
  await box.fill(JSON.stringify(change(cases), null, 2));
}

/** Runs the shown suite on the draft and the active version, and waits for both to finish. */
async function runBoth(page, draftRevision) {
  await page
    .getByRole("button", { name: new RegExp(`^Run .* on draft revision ${draftRevision} and version 1$`) })
    .click();
  await waitForText(page.locator("#run-title ~ section [role=status]"), /differs?\./, 90_000);
}

const cell = (page, caseId, column) => page.locator(`tr[data-case="${caseId}"] td`).nth(column);

/** Creates a release of `version` at 100 % on the Releases page. */
async function createRelease(page, agentId, version) {
  await page.goto(`${BASE_URL}/console/agents/${agentId}/releases`);
  await page.getByRole("heading", { level: 1, name: /^Releases/ }).waitFor();
  await page.getByLabel("Allocation 1").selectOption(String(version));
  await page.getByRole("button", { name: "Create release for development" }).click();
}

describe("console evals", () => {
  const browser = useConsoleBrowser();
  let seeded;
  before(async () => {
    seeded = await seed();
  });

  it("makes a case from a branch, diffs the draft against the active version, and gates the release", async () => {
    const { agent, threadId } = seeded;
    // The draft regresses: filler instead of the answer.
    const regressed = await admin.drafts.put(
      agent.id,
      artifact("lorem"),
      (await admin.drafts.get(agent.id)).revision,
    );

    const opened = await openConsole(browser, `/sessions/${threadId}`);
    const { page } = opened;
    await page.getByRole("button", { name: "Make a test from this branch" }).click();
    const dialog = page.getByRole("dialog", { name: "Make a test from this branch" });
    await dialog.getByLabel("Suite", { exact: true }).selectOption({ label: "A new suite…" });
    await dialog.getByLabel("New suite name").fill("Order questions");
    await dialog.getByRole("button", { name: "Add the case" }).click();
    await waitForText(page.getByRole("status"), "to Order questions");
    await page.getByRole("link", { name: "Open the suite" }).click();
    await page.getByRole("heading", { level: 1, name: "Evals · Evals agent" }).waitFor();

    // The case holds the branch: the visitor's question and the reply it got.
    const suite = (await admin.evals.list(agent.id)).items.find((s) => s.name === "Order questions");
    assert.ok(suite, "the suite was created");
    assert.deepEqual(
      suite.cases[0].messages.map((m) => [m.role, m.text]),
      [
        ["user", "Where is order 42?"],
        ["assistant", "Echo: Where is order 42?"],
      ],
    );
    assert.deepEqual(suite.cases[0].fromThread.threadId, threadId);

    // Expectation added in the editor; someone else saves first, the save shows the conflict, then goes over it.
    await editCases(page, (cases) => [{ ...cases[0], expect: [{ type: "contains", text: "order 42" }] }]);
    await admin.evals.update(agent.id, suite.id, { name: "Order questions" }, suite.revision);
    await page.getByRole("button", { name: "Save suite" }).click();
    const conflict = page.getByRole("alert").filter({ hasText: "this suite changed since you opened it" });
    await waitForText(conflict, `it is now at revision ${suite.revision + 1}`);
    await conflict.getByRole("button", { name: "Save mine over theirs" }).click();
    await waitForText(page.getByRole("status"), `Saved revision ${suite.revision + 2}`);
    const caseId = suite.cases[0].id;

    // Side by side: the active version passes, the regressed draft fails, with what it said instead.
    await runBoth(page, regressed.revision);
    await waitForText(page.locator("#run-title ~ section [role=status]"), "1 case differs");
    assert.match(await cell(page, caseId, 0).textContent(), /Failed[\s\S]*contains[\s\S]*seen/);
    assert.equal(await cell(page, caseId, 0).getAttribute("data-outcome"), "failed");
    assert.equal(await cell(page, caseId, 1).getAttribute("data-outcome"), "passed");
    await waitForText(page.locator("#history-title ~ section"), "Version 1");
    await checkScreen(page, "evals");

    // The gate: this suite at 100 %.
    await page.getByLabel("Gate on Order questions").check();
    await page.getByLabel("Minimum pass rate (%)").fill("100");
    await page.getByRole("button", { name: "Save gate" }).click();
    await waitForText(page.getByRole("status"), "Gate saved: 1 suite at 100 %");

    // The regressed draft, published, cannot take traffic.
    const v2 = await admin.versions.publish(agent.id, regressed.revision);
    await createRelease(page, agent.id, v2.version);
    const refusal = page.getByRole("alert").filter({ hasText: "Blocked by the release gate" });
    await waitForText(refusal, `Version ${v2.version}`);
    await waitForText(refusal, caseId);
    await checkScreen(page, "releases-gate-refusal");

    // Fixed: the draft answers again; its run passes, and the version published from it is released.
    const fixed = await admin.drafts.put(
      agent.id,
      artifact("echo", "Answer about orders, kindly."),
      regressed.revision,
    );
    await page.goto(`${BASE_URL}/console/agents/${agent.id}/evals?suite=${suite.id}`);
    await page.getByRole("heading", { level: 1, name: "Evals · Evals agent" }).waitFor();
    await runBoth(page, fixed.revision);
    await waitForText(page.locator("#run-title ~ section [role=status]"), "0 cases differ");
    assert.equal(await cell(page, caseId, 0).getAttribute("data-outcome"), "passed");

    const v3 = await admin.versions.publish(agent.id, fixed.revision);
    await createRelease(page, agent.id, v3.version);
    await waitForText(
      page.getByRole("status"),
      `Created a release for development: version ${v3.version} 100`,
    );
    const row = page.locator("tr[data-release]").first();
    await row.getByRole("button", { name: /^Activate/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Activate" }).click();
    await waitForText(page.getByRole("status"), `Activated in development: version ${v3.version} 100`);
    const releases = (await admin.releases.list(agent.id)).items;
    assert.ok(releases.some((r) => r.active && r.allocations[0].version === v3.version));

    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(opened.log.errors, []);
  });

  it("forces a release past the gate with a reason, and shows it in the history", async () => {
    const { agent } = seeded;
    const { page } = await openConsole(browser, `/agents/${agent.id}/releases`);
    // Version 2 (the regressed one) still fails the gate.
    await createRelease(page, agent.id, 2);
    const refusal = page.getByRole("alert").filter({ hasText: "Blocked by the release gate" });
    await refusal.waitFor();
    await refusal.getByLabel("Reason to go past the gate").fill("Hotfix rollback approved by on-call");
    await refusal.getByRole("button", { name: "Force past the gate" }).click();
    await waitForText(page.getByRole("status"), "Created a release for development: version 2 100");
    await waitForText(page.locator("tr[data-release]").first(), "Hotfix rollback approved by on-call");
  });
});
