// A tiny DOM for the widget's renderer in workerd (which has no DOM): elements, text nodes, and an HTML serialiser.
import type { DomDocument } from "../../src/widget/render-markdown";

export class StubNode {
  readonly children: StubNode[] = [];
  readonly attributes = new Map<string, string>();

  constructor(
    readonly nodeType: 1 | 3,
    readonly tag: string,
    readonly text = "",
  ) {}

  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }

  append(...nodes: StubNode[]): void {
    for (const node of nodes) this.children.push(node);
  }

  replaceChildren(...nodes: StubNode[]): void {
    this.children.length = 0;
    this.append(...nodes);
  }

  /** Every element below (and including) this node. */
  elements(): StubNode[] {
    if (this.nodeType === 3) return [];
    return [this, ...this.children.flatMap((child) => child.elements())];
  }
}

export const stubDocument: DomDocument<StubNode> = {
  createElement: (tag) => new StubNode(1, tag),
  createTextNode: (text) => new StubNode(3, "#text", text),
};

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const VOID = new Set(["br", "hr"]);

/** Serialises stub nodes as HTML (attributes sorted), so tests compare readable strings. */
export function toHtml(nodes: StubNode[]): string {
  return nodes
    .map((node) => {
      if (node.nodeType === 3) return escapeHtml(node.text);
      const attrs = [...node.attributes]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, value]) => ` ${name}="${escapeHtml(value).replace(/"/g, "&quot;")}"`)
        .join("");
      if (VOID.has(node.tag)) return `<${node.tag}${attrs}>`;
      return `<${node.tag}${attrs}>${toHtml(node.children)}</${node.tag}>`;
    })
    .join("");
}
