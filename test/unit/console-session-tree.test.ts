// The console's conversation tree: every branch (edit, regenerate, rollback) is reachable, switching keeps the place.
import { describe, expect, it } from "vitest";
import {
  buildTree,
  initialLeaf,
  leafAfterSwitch,
  newestLeafUnder,
  pathTo,
  siblingsOf,
} from "../../src/console/sessions/tree";

// u1 ─ a1 ─ u2 ─ a2            (the first branch)
//            └ u2' ─ a2' ─ u3   (u2 edited; the thread's leaf is u3's reply a3)
//                        └ a3
//       └ a1' (a regenerated reply to u1)
const m = (id: string, parentId: string | null, seq: number) => ({ id, parentId, seq });
const items = [
  m("u1", null, 1),
  m("a1", "u1", 2),
  m("u2", "a1", 3),
  m("a2", "u2", 4),
  m("u2b", "a1", 5),
  m("a2b", "u2b", 6),
  m("a1b", "u1", 7),
  m("u3", "a2b", 8),
  m("a3", "u3", 9),
];
const ids = (nodes: { item: { id: string } }[]) => nodes.map((n) => n.item.id);

describe("buildTree", () => {
  const tree = buildTree([...items].reverse());

  it("finds every branch as a leaf, oldest first, whatever the list's order", () => {
    expect(ids(tree.roots)).toEqual(["u1"]);
    expect(ids(tree.leaves)).toEqual(["a2", "a1b", "a3"]);
  });

  it("keeps siblings in the order they were written", () => {
    expect(ids(tree.nodes.get("a1")!.children)).toEqual(["u2", "u2b"]);
    const { siblings, index } = siblingsOf(tree, tree.nodes.get("a1b")!);
    expect(ids(siblings)).toEqual(["a1", "a1b"]);
    expect(index).toBe(1);
  });

  it("walks a branch root → leaf", () => {
    expect(ids(pathTo(tree.nodes.get("a3")!))).toEqual(["u1", "a1", "u2b", "a2b", "u3", "a3"]);
  });

  it("treats an entry whose parent is gone (retention) as a root rather than dropping it", () => {
    const orphaned = buildTree([m("x", "missing", 1), m("y", "x", 2)]);
    expect(ids(orphaned.roots)).toEqual(["x"]);
    expect(ids(orphaned.leaves)).toEqual(["y"]);
  });
});

describe("switching branches", () => {
  const tree = buildTree(items);
  const node = (id: string) => tree.nodes.get(id)!;

  it("opens on the thread's own leaf, or the newest leaf when it is unknown", () => {
    expect(initialLeaf(tree, "a2")?.item.id).toBe("a2");
    expect(initialLeaf(tree, "nope")?.item.id).toBe("a3");
    expect(initialLeaf(tree, null)?.item.id).toBe("a3");
    expect(initialLeaf(buildTree([]), null)).toBeUndefined();
  });

  it("continues below the chosen alternative at its newest leaf", () => {
    expect(newestLeafUnder(node("a1")).item.id).toBe("a3");
    expect(leafAfterSwitch(node("u2"), node("a3")).item.id).toBe("a2");
    expect(leafAfterSwitch(node("a1b"), node("a2")).item.id).toBe("a1b");
  });

  it("keeps the shown leaf when the chosen alternative is already on its path", () => {
    expect(leafAfterSwitch(node("u2b"), node("a3")).item.id).toBe("a3");
  });
});
