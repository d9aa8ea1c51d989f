// A conversation's entries as the tree they are (docs/storage.md): edits, regenerations and rollbacks are siblings below the
// same parent, so every leaf is one branch. Pure functions over the message list, so the screen only renders.

/** What the tree needs of a message: `GET /v1/sessions/:threadId/messages` items satisfy it. */
export interface TreeItem {
  id: string;
  parentId: string | null;
  seq: number;
}

export interface TreeNode<M extends TreeItem> {
  item: M;
  parent: TreeNode<M> | null;
  /** Oldest first (by `seq`): the first is the original, later ones are edits or regenerations. */
  children: TreeNode<M>[];
}

export interface Tree<M extends TreeItem> {
  nodes: Map<string, TreeNode<M>>;
  /** Entries without a parent in the list: the first message, and any whose parent was removed by retention. */
  roots: TreeNode<M>[];
  /** Every branch's last entry, oldest branch first. */
  leaves: TreeNode<M>[];
}

const bySeq = <M extends TreeItem>(a: TreeNode<M>, b: TreeNode<M>) => a.item.seq - b.item.seq;

export function buildTree<M extends TreeItem>(items: readonly M[]): Tree<M> {
  const nodes = new Map<string, TreeNode<M>>();
  for (const item of items) nodes.set(item.id, { item, parent: null, children: [] });
  const roots: TreeNode<M>[] = [];
  for (const node of nodes.values()) {
    const parent = node.item.parentId === null ? undefined : nodes.get(node.item.parentId);
    // A parent that is its own descendant would loop forever below; the list never has one, but a root is safe.
    if (parent && parent !== node) {
      node.parent = parent;
      parent.children.push(node);
    } else roots.push(node);
  }
  for (const node of nodes.values()) node.children.sort(bySeq);
  roots.sort(bySeq);
  const leaves = [...nodes.values()].filter((n) => n.children.length === 0).sort(bySeq);
  return { nodes, roots, leaves };
}

/** Root → `node`. */
export function pathTo<M extends TreeItem>(node: TreeNode<M>): TreeNode<M>[] {
  const path: TreeNode<M>[] = [];
  const seen = new Set<TreeNode<M>>();
  for (let at: TreeNode<M> | null = node; at && !seen.has(at); at = at.parent) {
    seen.add(at);
    path.push(at);
  }
  return path.reverse();
}

/** The most recent leaf below `node` (itself when it is one): where a branch switched to continues. */
export function newestLeafUnder<M extends TreeItem>(node: TreeNode<M>): TreeNode<M> {
  let best: TreeNode<M> | undefined;
  const stack = [node];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (at.children.length === 0 && (best === undefined || at.item.seq > best.item.seq)) best = at;
    stack.push(...at.children);
  }
  return best ?? node;
}

/** The siblings of `node` (itself included, oldest first) and its place among them. */
export function siblingsOf<M extends TreeItem>(
  tree: Tree<M>,
  node: TreeNode<M>,
): { siblings: TreeNode<M>[]; index: number } {
  const siblings = node.parent ? node.parent.children : tree.roots;
  return { siblings, index: siblings.indexOf(node) };
}

/**
 * The leaf to show after choosing `sibling` at a fork: the current leaf when it is below that sibling already,
 * else that sibling's newest leaf.
 */
export function leafAfterSwitch<M extends TreeItem>(
  sibling: TreeNode<M>,
  currentLeaf: TreeNode<M> | undefined,
): TreeNode<M> {
  if (currentLeaf && pathTo(currentLeaf).includes(sibling)) return currentLeaf;
  return newestLeafUnder(sibling);
}

/** The leaf a view opens on: the thread's own leaf (where its next turn goes) if listed, else the newest one. */
export function initialLeaf<M extends TreeItem>(
  tree: Tree<M>,
  leafId: string | null | undefined,
): TreeNode<M> | undefined {
  const own = leafId ? tree.nodes.get(leafId) : undefined;
  if (own) return own.children.length === 0 ? own : newestLeafUnder(own);
  return tree.leaves.at(-1);
}
