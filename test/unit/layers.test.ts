// The layer rules of src/ (docs/architecture.md#layers): each kind of rule reports a breaking import or text and lets
// an allowed one through; the maps the docs show render from a small rules fixture; the docs' src/ path check.
import { describe, expect, it } from "vitest";
import { srcPaths, stalePaths } from "../../scripts/lib/doc-paths.mjs";
import {
  folderMap,
  importsOf,
  onlyInBroken,
  picture,
  RULES,
  type Rules,
  ruleBroken,
  tooLong,
  undescribed,
  withSection,
} from "../../scripts/lib/layers.mjs";

describe("ruleBroken", () => {
  it("keeps the layer order: a lower line never imports a higher one", () => {
    expect(ruleBroken("src/storage/d1/agents.ts", "src/http/context.ts")).toBe(
      "src/storage/ may not import src/http/: src/http/ is above it",
    );
    expect(ruleBroken("src/http/context.ts", "src/storage/d1/agents.ts")).toBeNull();
    expect(ruleBroken("src/index.ts", "src/app.ts")).toBeNull();
  });

  it("keeps neighbours on one line apart", () => {
    expect(ruleBroken("src/models/turn.ts", "src/tools/execute-tool.ts")).toBe(
      "src/models/ may not import src/tools/: they are on the same line",
    );
    expect(ruleBroken("src/jobs/retention.ts", "src/objects/thread-agent.ts")).toBe(
      "src/jobs/ may not import src/objects/: they are on the same line",
    );
    expect(ruleBroken("src/models/turn.ts", "src/models/prompt.ts")).toBeNull();
  });

  it("keeps the programs separate: they import only shared (the console also the client), nothing imports them", () => {
    expect(ruleBroken("src/widget/widget.ts", "src/auth/jwt.ts")).toMatch(
      /^src\/widget\/ is a separate program/,
    );
    expect(ruleBroken("src/widget/widget.ts", "src/shared/protocol.ts")).toBeNull();
    expect(ruleBroken("src/widget/widget.ts", "src/widget/locales/de.json")).toBeNull();
    expect(ruleBroken("src/routes/assets.ts", "src/widget/constants.ts")).toBe(
      "nothing imports src/widget/: it is a separate program",
    );
    expect(ruleBroken("src/console/api.ts", "src/client/index.ts")).toBeNull();
    expect(ruleBroken("src/client/index.ts", "src/console/api.ts")).toMatch(
      /^src\/client\/ is a separate program/,
    );
    expect(ruleBroken("src/console/api.ts", "src/http/context.ts")).toMatch(/not src\/http\/$/);
  });

  it("keeps src/shared/ free of the product", () => {
    expect(ruleBroken("src/shared/api.ts", "src/errors.ts")).toMatch(/^src\/shared\/ imports nothing/);
    expect(ruleBroken("src/shared/api.ts", "src/shims/zod/index.ts")).toMatch(
      /^src\/shared\/ imports nothing/,
    );
    expect(ruleBroken("src/shared/api.ts", "src/shared/errors.ts")).toBeNull();
  });

  it("never lets a route file import another", () => {
    expect(ruleBroken("src/routes/threads.ts", "src/routes/agents.ts")).toMatch(
      /never imports another route file/,
    );
    expect(ruleBroken("src/routes/threads.ts", "src/http/load-agent.ts")).toBeNull();
  });

  it("orders the thread's rooms inside src/thread/", () => {
    expect(ruleBroken("src/thread/run/live-run.ts", "src/thread/object/index.ts")).toBe(
      "src/thread/run/ may not import src/thread/object/: src/thread/object/ is above it",
    );
    expect(ruleBroken("src/thread/object/frame-dispatch.ts", "src/thread/run/index.ts")).toBeNull();
    expect(ruleBroken("src/thread/run/live-run.ts", "src/thread/run/frames.ts")).toBeNull();
    expect(ruleBroken("src/thread/loose.ts", "src/thread/run/index.ts")).toMatch(/is in no inner layer/);
  });

  it("enters a faced room only through its index.ts", () => {
    expect(ruleBroken("src/thread/object/frame-dispatch.ts", "src/thread/run/live-run.ts")).toBe(
      "src/thread/run/ is entered only through its index.ts",
    );
    expect(ruleBroken("src/objects/thread-agent.ts", "src/thread/object/thread-gate.ts")).toBe(
      "src/thread/object/ is entered only through its index.ts",
    );
    expect(ruleBroken("src/objects/thread-agent.ts", "src/thread/object/index.ts")).toBeNull();
  });

  it("lets the rest of src/ into src/thread/ only through the contract, except src/objects/", () => {
    expect(ruleBroken("src/routes/threads.ts", "src/thread/run/index.ts")).toBe(
      "src/thread/ is entered only through src/thread/contract/index.ts",
    );
    expect(ruleBroken("src/routes/threads.ts", "src/thread/contract/index.ts")).toBeNull();
    expect(ruleBroken("src/objects/thread-agent.ts", "src/thread/conversation/index.ts")).toBeNull();
  });

  it("names a file in no layer", () => {
    expect(ruleBroken("src/newroom/x.ts", "src/errors.ts")).toBe(
      "src/newroom/x.ts is in no layer: add its folder to the layers in scripts/lib/layers.mjs",
    );
  });
});

describe("onlyInBroken", () => {
  const text = 'import { x } from "y";\n\nconst stub = env.THREAD.get(env.THREAD.idFromName(name));\n';

  it("reports the thread binding outside src/thread/contract/, with its line", () => {
    expect(onlyInBroken("src/routes/threads.ts", text)).toEqual([
      { found: "THREAD.get", line: 3, folder: "src/thread/contract/" },
    ]);
    expect(onlyInBroken("src/http/x.ts", "env.THREAD.idFromName(n)")).toHaveLength(1);
  });

  it("allows it inside the contract and leaves other bindings alone", () => {
    expect(onlyInBroken("src/thread/contract/thread-stub.ts", text)).toEqual([]);
    expect(onlyInBroken("src/routes/threads.ts", "env.TENANT_QUOTA.get(id); env.THREADS_SEEN")).toEqual([]);
  });
});

describe("importsOf", () => {
  const source = [
    'import { a } from "../http/context";',
    'import type { B } from "./agents";',
    'export { c } from "../errors";',
    'import "../shims/no-email";',
    'const d = await import("../storage/d1/shards");',
    'import { z } from "zod";',
    'import { threadStub } from "../thread/contract";',
  ].join("\n");

  it("finds every relative import, type and side-effect and dynamic ones included, with its line", () => {
    const found = importsOf("src/routes/threads.ts", source);
    expect(found.map((i) => [i.line, i.target])).toEqual([
      [1, "src/http/context.ts"],
      [2, "src/routes/agents.ts"],
      [3, "src/errors.ts"],
      [4, "src/shims/no-email.ts"],
      [5, "src/storage/d1/shards.ts"],
      [7, "src/thread/contract.ts"],
    ]);
  });

  it('resolves "../thread/contract" to the folder\'s index.ts, which the door lets through', () => {
    const exists = (path: string) => path === "src/thread/contract/index.ts";
    const contract = importsOf("src/routes/threads.ts", source, exists).at(-1)!;
    expect(contract.target).toBe("src/thread/contract/index.ts");
    expect(ruleBroken("src/routes/threads.ts", contract.target)).toBeNull();
    const unresolved = importsOf("src/routes/threads.ts", source).at(-1)!;
    expect(ruleBroken("src/routes/threads.ts", unresolved.target)).toBe(
      "src/thread/ is entered only through src/thread/contract/index.ts",
    );
  });
});

/** A small house: a top file, two neighbours, a bottom with two ordered rooms, and a program. */
const FIXTURE: Rules = {
  layers: [["src/main.ts"], ["src/top/", "src/side/"], ["src/low/"]],
  programs: { "src/app/": [] },
  shared: "src/low/",
  routes: "src/top/",
  routeHelpers: [],
  innerLayers: { "src/low/": [["src/low/up/"], ["src/low/down/"]] },
  faced: ["src/low/up/"],
  doors: {},
  maxLines: 3,
  onlyIn: [{ pattern: /SECRET/, folder: "src/low/", says: "Only src/low/ says SECRET." }],
  units: [
    { unit: "src/main.ts", says: "entry" },
    { unit: "src/top/", says: "the top" },
    { unit: "src/side/", says: "beside it" },
    { unit: "src/low/", says: "the bottom" },
    { unit: "src/low/up/", says: "upper room" },
    { unit: "src/low/down/", says: "lower room" },
    { unit: "src/low/down/deep/", says: "deeper" },
    { unit: "src/app/", says: "a program" },
    { unit: "src/gone/", says: "not in the tree" },
  ],
};
const TREE = [
  "src/app/",
  "src/low/",
  "src/low/down/",
  "src/low/down/deep/",
  "src/low/up/",
  "src/main.ts",
  "src/side/",
  "src/top/",
];

describe("the maps", () => {
  it("draws the folder map in layer order, sub-folders indented in the rules' order, programs last", () => {
    expect(folderMap(TREE, FIXTURE)).toBe(
      [
        "src/main.ts  entry",
        "src/top/     the top",
        "src/side/    beside it",
        "src/low/     the bottom",
        "  up/        upper room",
        "  down/      lower room",
        "    deep/    deeper",
        "src/app/     a program",
      ].join("\n"),
    );
  });

  it("numbers the lines and the rooms in the picture, and leaves out what the tree lacks", () => {
    const drawn = picture(
      TREE.filter((entry) => entry !== "src/side/"),
      FIXTURE,
    ).split("\n");
    expect(drawn.slice(0, 8)).toEqual([
      "line   unit         what it holds",
      "1      src/main.ts  entry",
      "2      src/top/     the top",
      "3      src/low/     the bottom",
      "3.1      up/        upper room",
      "3.2      down/      lower room",
      "           deep/    deeper",
      "apart  src/app/     a program",
    ]);
    expect(drawn).toContain("Inside src/low/ the same rule orders its rooms: up/ above down/.");
    expect(drawn).toContain("Only src/low/ says SECRET.");
    expect(drawn.join("\n")).not.toContain("src/gone/");
  });

  it("names each folder and top file that has no line", () => {
    expect(undescribed([...TREE, "src/new/", "src/low/down/more/", "src/extra.ts"], FIXTURE)).toEqual([
      "src/new/",
      "src/low/down/more/",
      "src/extra.ts",
    ]);
    expect(undescribed(TREE, FIXTURE)).toEqual([]);
  });

  it("refuses a file past the most lines a file may have, and no file of the real tree is", () => {
    expect(tooLong("src/top/a.ts", "1\n2\n3\n", FIXTURE)).toBeNull();
    expect(tooLong("src/top/a.ts", "1\n2\n3\n4\n", FIXTURE)).toBe(
      "src/top/a.ts has 4 lines, over 3: split it by concern",
    );
    expect(RULES.maxLines).toBe(450);
  });

  it("describes every unit the real layers name", () => {
    const described = new Set(RULES.units.map((u) => u.unit));
    const named = [...RULES.layers.flat(2), ...Object.keys(RULES.programs)];
    expect(named.filter((unit) => !described.has(unit))).toEqual([]);
  });

  it("rewrites only what lies between a section's markers", () => {
    const begin = "<!-- generated by scripts/check-layers.mjs --write-docs: map; do not edit -->";
    const doc = `# Doc\n\n${begin}\nold\n<!-- end generated -->\n\nafter\n`;
    const next = withSection(doc, "map", "new");
    expect(next).toBe(`# Doc\n\n${begin}\nnew\n<!-- end generated -->\n\nafter\n`);
    expect(withSection(next!, "map", "new")).toBe(next);
    expect(withSection(doc, "other", "new")).toBeNull();
  });
});

describe("the docs' src/ paths", () => {
  const tree = new Set([
    "src/",
    "src/http/",
    "src/http/bearer.ts",
    "src/storage/",
    "src/control/url-policy.ts",
  ]);
  const exists = (path: string) => tree.has(path);
  const doc = [
    "The parser is `src/http/bearer.ts`. Routes share src/http/.",
    "Every file in `src/**/*.ts`, every table in src/storage/* and bench/echo-worker/src/index.ts (not ours).",
    "It moved: `src/tools/url-policy.ts` (now `src/control/url-policy.ts`).",
    "But `src/auth/bearer.ts` and src/storage/gone.ts: are stale; so is `src/tools/x.ts` (now `src/tools/y.ts`).",
  ].join("\n");

  it("finds each path with its line, cutting patterns back to their folder", () => {
    expect(srcPaths(doc).map((p) => `${p.line} ${p.path}`)).toEqual([
      "1 src/http/bearer.ts",
      "1 src/http/",
      "2 src/",
      "2 src/storage/",
      "3 src/tools/url-policy.ts",
      "3 src/control/url-policy.ts",
      "4 src/auth/bearer.ts",
      "4 src/storage/gone.ts",
      "4 src/tools/x.ts",
      "4 src/tools/y.ts",
    ]);
  });

  it("reports each path not in the tree as doc:line: path, unless a history names where it went", () => {
    const stale = stalePaths("docs/x.md", doc, exists);
    expect(stale.map((line) => line.split(" is not")[0])).toEqual([
      "docs/x.md:4: src/auth/bearer.ts",
      "docs/x.md:4: src/storage/gone.ts",
      "docs/x.md:4: src/tools/x.ts",
      "docs/x.md:4: src/tools/y.ts",
    ]);
    expect(stalePaths("docs/x.md", "All in `src/http/bearer.ts`.", exists)).toEqual([]);
  });
});
