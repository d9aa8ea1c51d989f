// Part of `npm test`: every `src/…` path README.md and docs/*.md name exists, the code blocks of docs/api.md at least
// parse, and with `--run` (CI, against a running `npm run dev`) its walk-through runs as written and every response
// it shows has exactly the fields the text claims.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { transformSync } from "esbuild";
import { CliError, runMain } from "./lib/cli.mjs";
import { anchorsOf, brokenAnchors, stalePaths } from "./lib/doc-paths.mjs";
import { localBaseUrl } from "./lib/local-server.mjs";
import { root } from "./lib/paths.mjs";

const DOC = join(root, "docs", "api.md");
/** The section whose shell blocks are one runnable session, from nothing to a streamed reply. */
const WALKTHROUGH = "## From a fresh tenant to a first reply";

/** Every fenced block: its language, code, first line number and the prose since the previous block. */
export function codeBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split("\n");
  let prose = [];
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) {
      if (lines[i].startsWith("## ")) section = lines[i].trim();
      prose.push(lines[i]);
      continue;
    }
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith("```")) end++;
    blocks.push({
      lang: open[1],
      code: lines.slice(start, end).join("\n"),
      line: start,
      prose: prose.join("\n"),
      section,
    });
    prose = [];
    i = end;
  }
  return blocks;
}

/** Problems with one block's syntax: bash -n for shell, esbuild for JavaScript and TypeScript, JSON.parse for JSON. */
function syntaxProblem(block) {
  if (block.lang === "sh" || block.lang === "bash") {
    const checked = spawnSync("bash", ["-n"], { input: block.code, encoding: "utf8" });
    return checked.status === 0 ? null : checked.stderr.trim();
  }
  if (["js", "ts", "tsx", "jsx"].includes(block.lang)) {
    try {
      transformSync(block.code, { loader: block.lang, format: "esm", target: "es2022", logLevel: "silent" });
      return null;
    } catch (error) {
      return error.errors?.map((e) => `${e.location?.line ?? "?"}: ${e.text}`).join("; ") ?? String(error);
    }
  }
  // JSON examples may abbreviate with "…"; those are shapes, not documents.
  if (block.lang === "json" && !block.code.includes("…")) {
    try {
      JSON.parse(block.code);
      return null;
    } catch (error) {
      return error.message;
    }
  }
  return null;
}

/**
 * The top-level fields the prose claims for the block's response: the last "→ `201 {a, b?, c: …}`" before it.
 * Returns null when it claims none; `optional` holds the fields marked `?`.
 */
export function claimedFields(prose) {
  const claims = [...prose.matchAll(/→ `(\d{3}) \{([^`]*)\}`/g)];
  const last = claims.at(-1);
  if (!last) return null;
  const body = last[2].replace(/\s+/g, " ");
  const fields = [];
  let depth = 0;
  let current = "";
  for (const c of body) {
    if (c === "{" || c === "[") depth++;
    if (c === "}" || c === "]") depth--;
    if (c === "," && depth === 0) {
      fields.push(current);
      current = "";
    } else current += c;
  }
  fields.push(current);
  const names = fields.map((f) => f.split(":")[0].trim()).filter((f) => f !== "" && f !== "…");
  return {
    status: Number(last[1]),
    required: names.filter((n) => !n.endsWith("?")),
    optional: names.filter((n) => n.endsWith("?")).map((n) => n.slice(0, -1)),
  };
}

function checkSyntax(blocks) {
  const problems = [];
  for (const block of blocks) {
    const problem = syntaxProblem(block);
    if (problem) problems.push(`docs/api.md:${block.line} (${block.lang}): ${problem}`);
  }
  return problems;
}

/** Runs the walk-through's shell blocks in one bash session against `base`, then holds each response to its claim. */
function runWalkthrough(blocks, base) {
  const steps = blocks.filter((b) => b.section === WALKTHROUGH && b.lang === "sh");
  if (steps.length === 0) throw new CliError(`docs/api.md has no shell blocks under "${WALKTHROUGH}".`);
  const dir = mkdtempSync(join(tmpdir(), "api-docs-"));
  try {
    // Each response body is kept per block; an HTTP error fails the block (the docs' commands must succeed).
    const script = [
      "set -eo pipefail",
      `curl() { command curl --fail-with-body "$@" | tee -a "${dir}/block-$BLOCK.out"; local s="\${PIPESTATUS[0]}"; echo >>"${dir}/block-$BLOCK.out"; return "$s"; }`,
      ...steps.map((step, i) =>
        [`BLOCK=${i}`, step.code.replace(/^BASE=.*$/m, `BASE=${base}`), `echo "::ok ${i}" >&2`].join("\n"),
      ),
    ].join("\n");
    const ran = spawnSync("bash", ["-c", script], { cwd: root, encoding: "utf8", timeout: 120_000 });
    const done = new Set([...ran.stderr.matchAll(/::ok (\d+)/g)].map((m) => Number(m[1])));
    const problems = [];
    steps.forEach((step, i) => {
      if (!done.has(i)) {
        problems.push(
          `docs/api.md:${step.line}: the block failed (exit ${ran.status}): ${ran.stderr.trim()}`,
        );
        return;
      }
      const claim = claimedFields(step.prose);
      if (claim === null) return;
      let out = "";
      try {
        out = readFileSync(join(dir, `block-${i}.out`), "utf8");
      } catch {}
      const first = firstJsonObject(out);
      if (first === null) {
        problems.push(`docs/api.md:${step.line}: the block printed no JSON to hold to its claim`);
        return;
      }
      const keys = Object.keys(first);
      const missing = claim.required.filter((k) => !keys.includes(k));
      const unclaimed = keys.filter((k) => !claim.required.includes(k) && !claim.optional.includes(k));
      if (missing.length > 0 || unclaimed.length > 0) {
        problems.push(
          `docs/api.md:${step.line}: the response has ${JSON.stringify(keys)}; the text claims ` +
            `${JSON.stringify(claim.required)} (optional ${JSON.stringify(claim.optional)})` +
            `${missing.length ? `, missing ${missing.join(", ")}` : ""}` +
            `${unclaimed.length ? `, not mentioned ${unclaimed.join(", ")}` : ""}`,
        );
      }
    });
    return { problems, ran: steps.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first line of `out` that is a JSON object (curl prints each response on its own). */
function firstJsonObject(out) {
  for (const line of out.split("\n")) {
    const text = line.trim();
    if (!text.startsWith("{")) continue;
    try {
      const value = JSON.parse(text);
      if (value && typeof value === "object" && !Array.isArray(value)) return value;
    } catch {}
  }
  return null;
}

/** Every `src/…` path named in README.md and docs/*.md that is not in the tree, as "doc:line: path …". */
function checkSrcPaths() {
  const docs = [
    "README.md",
    ...readdirSync(join(root, "docs"))
      .filter((n) => n.endsWith(".md"))
      .map((n) => `docs/${n}`),
  ];
  // A module is named with or without its extension.
  const exists = (path) => [path, `${path}.ts`, `${path}.tsx`].some((p) => existsSync(join(root, p)));
  const problems = docs.flatMap((doc) => stalePaths(doc, readFileSync(join(root, doc), "utf8"), exists));
  return { problems, docs: docs.length };
}

/** Every `docs/<name>.md#<anchor>` that src/, scripts/, README.md and docs/ cite names a heading that exists. */
function checkAnchors() {
  const cache = new Map();
  const anchorsIn = (doc) => {
    if (!cache.has(doc)) {
      const path = join(root, doc);
      cache.set(doc, existsSync(path) ? anchorsOf(readFileSync(path, "utf8")) : null);
    }
    return cache.get(doc);
  };
  const files = (dir, pattern) =>
    readdirSync(join(root, dir), { recursive: true })
      .map((name) => `${dir}/${String(name).split("\\").join("/")}`)
      .filter((file) => pattern.test(file));
  const cited = [
    "README.md",
    ...files("docs", /\.md$/),
    ...files("src", /\.(ts|tsx|css)$/),
    ...files("scripts", /\.(mjs|ts)$/),
  ];
  return cited.flatMap((file) => brokenAnchors(file, readFileSync(join(root, file), "utf8"), anchorsIn));
}

async function main() {
  const { values } = parseArgs({ options: { run: { type: "boolean" }, url: { type: "string" } } });
  const paths = checkSrcPaths();
  if (paths.problems.length > 0) {
    throw new CliError(
      `src/ paths the docs name that are not in the tree:\n  ${paths.problems.join("\n  ")}`,
    );
  }
  const anchors = checkAnchors();
  if (anchors.length > 0) {
    throw new CliError(`Doc sections cited that do not exist:\n  ${anchors.join("\n  ")}`);
  }
  const blocks = codeBlocks(readFileSync(DOC, "utf8"));
  const problems = checkSyntax(blocks);
  let ran = 0;
  if (values.run) {
    const result = runWalkthrough(blocks, values.url ?? localBaseUrl());
    problems.push(...result.problems);
    ran = result.ran;
  }
  if (problems.length > 0) throw new CliError(`docs/api.md:\n  ${problems.join("\n  ")}`);
  console.log(
    `docs: every src/ path in README.md and the ${paths.docs - 1} docs/*.md exists, and every docs/ section cited exists`,
  );
  console.log(
    `docs/api.md: ${blocks.length} code blocks parse${values.run ? `; the walk-through's ${ran} shell blocks ran and match their claims` : ""}`,
  );
  return 0;
}

await runMain(main);
