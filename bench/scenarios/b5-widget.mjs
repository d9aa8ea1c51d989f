// B5: the embed loader's and the widget's gzip sizes (read from the built files), the console's first screen and
// on-demand chunks (from its build manifest), and in Debian's Chromium the time
// from the loader script arriving to the launcher being visible, and from opening the widget to its `ready` event.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { root } from "../../scripts/lib/paths.mjs";
import { summarize } from "../lib/stats.mjs";

export const LOADER_BUDGET_BYTES = 2 * 1024;
export const WIDGET_BUDGET_BYTES = 20 * 1024;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"];

/** Builds the widget when the build script exists; sizes come from the files it wrote. */
export async function widgetSizes() {
  const script = join(root, "scripts", "build-widget.mjs");
  if (!existsSync(script))
    return { pending: "the widget build (scripts/build-widget.mjs) does not exist yet" };
  const { buildWidget } = await import(script);
  const manifest = await buildWidget();
  const size = (path) => {
    const bytes = readFileSync(join(root, "public", path));
    return { bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
  };
  return {
    version: manifest.version,
    loader: { path: manifest.loader.path, ...size(manifest.loader.path), budgetBytes: LOADER_BUDGET_BYTES },
    embedJs: { path: "/embed.js", ...size("/embed.js") },
    widget: { path: manifest.widget.path, ...size(manifest.widget.path), budgetBytes: WIDGET_BUDGET_BYTES },
  };
}

/** Builds the console; its first-screen and on-demand gzip sizes come from the manifest the build wrote. */
export async function consoleSizes() {
  const script = join(root, "scripts", "build-console.mjs");
  if (!existsSync(script))
    return { pending: "the console build (scripts/build-console.mjs) does not exist yet" };
  const { buildConsole } = await import(script);
  const manifest = await buildConsole();
  const { consoleSizes: sizesOf } = await import(join(root, "scripts", "check-console-budget.mjs"));
  return sizesOf(manifest);
}

// Runs in the page before any of its scripts: stamps when the launcher first paints and when `ready` fires.
function instrumentPage() {
  window.__bench = { launcherVisibleAt: null, readyAt: null, openAt: null };
  window.AgentThreads = window.AgentThreads || { q: [] };
  window.AgentThreads.q.push([
    "on",
    "ready",
    () => {
      window.__bench.readyAt ??= performance.now();
    },
  ]);
  const look = () => {
    const button = document.querySelector("agent-thread")?.shadowRoot?.querySelector("[part=launcher]");
    if (
      button &&
      button.getBoundingClientRect().width > 0 &&
      getComputedStyle(button).visibility !== "hidden"
    ) {
      window.__bench.launcherVisibleAt = performance.now();
      return;
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}

export async function benchWidget({ product, agent, pages = 5 }) {
  if (!existsSync(CHROMIUM)) return { pending: `${CHROMIUM} is missing (apt-get install -y chromium)` };
  const { chromium } = await import("playwright-core");
  const profile = mkdtempSync(join(tmpdir(), "agent-threads-bench-chromium-"));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  const launcher = [];
  const ready = [];
  try {
    for (let i = 0; i < pages; i += 1) {
      // A fresh context per page: nothing cached, as for a first-time visitor.
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.addInitScript(instrumentPage);
      await page.goto(`${product.baseUrl}/test/widget.html?key=${agent.publicKey}`);
      await page.waitForFunction(() => window.__bench.launcherVisibleAt !== null, null, { timeout: 15_000 });
      launcher.push(
        await page.evaluate(() => {
          const entry = performance
            .getEntriesByType("resource")
            .find((e) => new URL(e.name).pathname === "/embed.js");
          return window.__bench.launcherVisibleAt - (entry?.responseEnd ?? 0);
        }),
      );
      await page.evaluate(() => {
        window.__bench.openAt = performance.now();
        document.querySelector("agent-thread").shadowRoot.querySelector("[part=launcher]").click();
      });
      await page.waitForFunction(() => window.__bench.readyAt !== null, null, { timeout: 20_000 });
      ready.push(await page.evaluate(() => window.__bench.readyAt - window.__bench.openAt));
      await context.close();
    }
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  return { pages, scriptToLauncherMs: summarize(launcher), openToReadyMs: summarize(ready) };
}
