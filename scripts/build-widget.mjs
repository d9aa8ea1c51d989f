// `npm run build:widget`: bundles the embed loader and the widget into content-hashed, immutable assets under
// public/widget/v<version>/, the major channel public/widget/v<major>/ and public/embed.js, plus a manifest. The
// translations (src/widget/locales/*.json) become separate content-hashed JSON files the widget fetches on demand, and
// the past conversations list (src/widget/past-view.ts) a content-hashed module it imports on the first click, and the
// approval card (src/widget/approval-view.ts) and the message controls (src/widget/message-actions.ts) modules it
// imports when first needed, and the attachments module (src/widget/attach-view.ts) it imports only for an agent that
// takes files or a message that carries some.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { root } from "./lib/paths.mjs";

const publicDir = join(root, "public");
const widgetDir = join(publicDir, "widget");

/** The widget's semver, read from src/widget/version.ts (the one place it is written). */
export function widgetVersion() {
  const text = readFileSync(join(root, "src", "widget", "version.ts"), "utf8");
  const match = /WIDGET_VERSION\s*=\s*"(\d+\.\d+\.\d+)"/.exec(text);
  if (match === null) throw new CliError('src/widget/version.ts has no WIDGET_VERSION = "x.y.z".');
  return match[1];
}

/**
 * The loader and the widget need constructable stylesheets (`adoptedStyleSheets`: Chrome 73, Firefox 101, Safari
 * 16.4), so every browser they run in has ES2022: native private fields instead of WeakMap helpers on each use (~1.4 KB
 * gzip), and `??=` as written.
 */
const TARGET = "es2022";

async function bundle(entry, format, define = {}, options = {}) {
  const result = await build({
    entryPoints: [join(root, "src", "widget", entry)],
    bundle: true,
    format,
    minify: true,
    target: TARGET,
    ...options,
    platform: "browser",
    legalComments: "none",
    charset: "utf8",
    define,
    write: false,
    logLevel: "warning",
  });
  const file = result.outputFiles[0];
  if (file === undefined) throw new CliError(`esbuild produced nothing for ${entry}.`);
  return file.contents;
}

const localesDir = join(root, "src", "widget", "locales");

/** Each translation as compact JSON, checked to be an object of strings (anything else fails the build). */
export function readLocales() {
  return readdirSync(localesDir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => {
      const tag = name.slice(0, -".json".length);
      if (!/^[a-z]{2,3}(-[a-z0-9]{2,8})*$/.test(tag))
        throw new CliError(`locales/${name}: not a lowercase language tag.`);
      let value;
      try {
        value = JSON.parse(readFileSync(join(localesDir, name), "utf8"));
      } catch (error) {
        throw new CliError(`locales/${name}: ${error.message}`);
      }
      const ok = typeof value === "object" && value !== null && !Array.isArray(value);
      if (!ok || !Object.values(value).every((v) => typeof v === "string")) {
        throw new CliError(`locales/${name}: must be an object of strings.`);
      }
      return { tag, bytes: Buffer.from(JSON.stringify(value)) };
    });
}

const hash = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 10);
const gzipSize = (bytes) => gzipSync(bytes, { level: 9 }).length;

/** Builds everything and returns the manifest it wrote. */
export async function buildWidget() {
  const version = widgetVersion();
  const major = version.split(".")[0];
  const locales = readLocales().map(({ tag, bytes }) => ({
    tag,
    bytes,
    path: `/widget/v${version}/locales/${tag}-${hash(bytes)}.json`,
  }));
  const localePaths = Object.fromEntries(locales.map(({ tag, path }) => [tag, path]));
  const pastView = await bundle("past-view.ts", "esm");
  const pastViewPath = `/widget/v${version}/past-${hash(pastView)}.js`;
  const approvalView = await bundle("approval-view.ts", "esm");
  const actionsView = await bundle("message-actions.ts", "esm");
  const actionsViewPath = `/widget/v${version}/actions-${hash(actionsView)}.js`;
  const approvalViewPath = `/widget/v${version}/approval-${hash(approvalView)}.js`;
  const attachView = await bundle("attach-view.ts", "esm", { __LOCALES__: JSON.stringify(localePaths) });
  const attachViewPath = `/widget/v${version}/attach-${hash(attachView)}.js`;
  const widget = await bundle("widget.ts", "esm", {
    __LOCALES__: JSON.stringify(localePaths),
    __PAST_VIEW__: JSON.stringify(pastViewPath),
    __APPROVAL_VIEW__: JSON.stringify(approvalViewPath),
    __ACTIONS_VIEW__: JSON.stringify(actionsViewPath),
    __ATTACH_VIEW__: JSON.stringify(attachViewPath),
  });
  const widgetName = `widget-${hash(widget)}.js`;
  const widgetPath = `/widget/v${version}/${widgetName}`;
  // The loader's own members are `_`-prefixed (src/widget/embed.ts) and read by nothing else: shortened, they save
  // bytes of its 2 KB.
  const loader = await bundle(
    "embed.ts",
    "iife",
    { __WIDGET_PATH__: JSON.stringify(widgetPath) },
    { mangleProps: /^_/ },
  );
  const loaderName = `embed-${hash(loader)}.js`;

  rmSync(widgetDir, { recursive: true, force: true });
  const exact = join(widgetDir, `v${version}`);
  const channel = join(widgetDir, `v${major}`);
  mkdirSync(exact, { recursive: true });
  mkdirSync(channel, { recursive: true });
  mkdirSync(join(exact, "locales"), { recursive: true });
  const files = {
    [join(exact, widgetName)]: widget,
    [join(exact, loaderName)]: loader,
    [join(channel, "widget.js")]: widget,
    [join(channel, "embed.js")]: loader,
    [join(publicDir, "embed.js")]: loader,
  };
  files[join(publicDir, pastViewPath)] = pastView;
  files[join(publicDir, approvalViewPath)] = approvalView;
  files[join(publicDir, actionsViewPath)] = actionsView;
  files[join(publicDir, attachViewPath)] = attachView;
  for (const { path, bytes } of locales) files[join(publicDir, path)] = bytes;
  for (const [path, bytes] of Object.entries(files)) writeFileSync(path, bytes);

  const manifest = {
    version,
    loader: { path: `/widget/v${version}/${loaderName}`, bytes: loader.length, gzipBytes: gzipSize(loader) },
    widget: { path: widgetPath, bytes: widget.length, gzipBytes: gzipSize(widget) },
    /** Modules the widget imports on demand (the budget check holds them to their own budget). */
    lazy: {
      pastView: { path: pastViewPath, bytes: pastView.length, gzipBytes: gzipSize(pastView) },
      approvalView: { path: approvalViewPath, bytes: approvalView.length, gzipBytes: gzipSize(approvalView) },
      actionsView: { path: actionsViewPath, bytes: actionsView.length, gzipBytes: gzipSize(actionsView) },
      attachView: { path: attachViewPath, bytes: attachView.length, gzipBytes: gzipSize(attachView) },
    },
    channel: { loader: `/widget/v${major}/embed.js`, widget: `/widget/v${major}/widget.js` },
    locales: Object.fromEntries(
      locales.map(({ tag, path, bytes }) => [tag, { path, bytes: bytes.length, gzipBytes: gzipSize(bytes) }]),
    ),
    integrity: {
      loader: `sha384-${createHash("sha384").update(loader).digest("base64")}`,
      widget: `sha384-${createHash("sha384").update(widget).digest("base64")}`,
      pastView: `sha384-${createHash("sha384").update(pastView).digest("base64")}`,
      approvalView: `sha384-${createHash("sha384").update(approvalView).digest("base64")}`,
      actionsView: `sha384-${createHash("sha384").update(actionsView).digest("base64")}`,
      attachView: `sha384-${createHash("sha384").update(attachView).digest("base64")}`,
    },
  };
  writeFileSync(join(widgetDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

async function main() {
  const manifest = await buildWidget();
  const kb = (n) => `${(n / 1024).toFixed(2)} KB`;
  console.log(`widget v${manifest.version} → ${relative(root, widgetDir)}/`);
  console.log(
    `  loader  ${manifest.loader.path}  ${kb(manifest.loader.gzipBytes)} gzip (${kb(manifest.loader.bytes)} raw)`,
  );
  console.log(
    `  widget  ${manifest.widget.path}  ${kb(manifest.widget.gzipBytes)} gzip (${kb(manifest.widget.bytes)} raw)`,
  );
  const past = manifest.lazy.pastView;
  console.log(
    `  past    ${past.path}  ${kb(past.gzipBytes)} gzip (imported on the first "past conversations" click)`,
  );
  const card = manifest.lazy.approvalView;
  console.log(
    `  card    ${card.path}  ${kb(card.gzipBytes)} gzip (imported when the first approval card is shown)`,
  );
  const acts = manifest.lazy.actionsView;
  console.log(
    `  actions ${acts.path}  ${kb(acts.gzipBytes)} gzip (imported once the conversation has a message)`,
  );
  const files = manifest.lazy.attachView;
  console.log(
    `  attach  ${files.path}  ${kb(files.gzipBytes)} gzip (imported for an agent that takes attachments)`,
  );
  const tags = Object.keys(manifest.locales);
  console.log(`  locales ${tags.join(", ")} (fetched on demand, not in the widget's budget)`);
  console.log(`  also    /embed.js, ${manifest.channel.loader}, ${manifest.channel.widget}`);
  return 0;
}

if (isMain(import.meta.url)) await runMain(main);
