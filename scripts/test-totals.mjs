// Sums the JSON test reports in test-results/ into the one closing line CI reads: `N passed, N failed`.
// Understands vitest's JSON reporter (numPassedTests/numFailedTests) and Playwright's (stats.expected/unexpected).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { root } from "./lib/paths.mjs";

const vitestReport = z.object({
  numPassedTests: z.number(),
  numFailedTests: z.number(),
  numFailedTestSuites: z.number().optional(),
  success: z.boolean().optional(),
});
const playwrightReport = z.object({
  stats: z.object({ expected: z.number(), unexpected: z.number(), flaky: z.number().optional() }),
});

/** `{passed, failed, reports}` over every *.json in `dir`; an unreadable report counts as one failure. */
export function totals(dir) {
  const sum = { passed: 0, failed: 0, reports: 0 };
  if (!existsSync(dir)) return sum;
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".json"))) {
    let json;
    try {
      json = JSON.parse(readFileSync(join(dir, file), "utf8"));
    } catch {
      sum.failed += 1;
      sum.reports += 1;
      continue;
    }
    const vitest = vitestReport.safeParse(json);
    const playwright = playwrightReport.safeParse(json);
    if (vitest.success) {
      sum.passed += vitest.data.numPassedTests;
      sum.failed += vitest.data.numFailedTests;
      // A test file that fails to load has no failed test in it, yet the run failed: count the file.
      if (vitest.data.success === false && vitest.data.numFailedTests === 0) {
        sum.failed += Math.max(1, vitest.data.numFailedTestSuites ?? 0);
      }
    } else if (playwright.success) {
      sum.passed += playwright.data.stats.expected + (playwright.data.stats.flaky ?? 0);
      sum.failed += playwright.data.stats.unexpected;
    } else {
      continue;
    }
    sum.reports += 1;
  }
  return sum;
}

const dir = process.argv[2] ?? join(root, "test-results");
const sum = totals(dir);
if (sum.reports === 0) {
  console.error(`no test reports in ${dir}`);
  process.exit(2);
}
console.log(`${sum.passed} passed, ${sum.failed} failed`);
