// Builds DOM nodes from parsed markdown with createElement/createTextNode only: model text can never become markup.
import { type Block, type Inline, parseMarkdownSourced } from "./markdown";

/** The slice of the DOM the renderer uses, generic over the node type: a real `Document` fits, tests pass a stub. */
export interface DomParent<N> {
  setAttribute(name: string, value: string): void;
  append(...nodes: N[]): void;
  replaceChildren(...nodes: N[]): void;
}
export type DomElement<N> = N & DomParent<N>;
export interface DomDocument<N> {
  createElement(tag: string): DomElement<N>;
  createTextNode(text: string): N;
}

function el<N>(doc: DomDocument<N>, tag: string, children: N[] = []): DomElement<N> {
  const node = doc.createElement(tag);
  // One child at a time: a spread of a long reply's hundred thousand nodes overflows the call stack.
  for (const child of children) node.append(child);
  return node;
}

function inline<N>(doc: DomDocument<N>, node: Inline): N {
  switch (node.t) {
    case "text":
      return doc.createTextNode(node.v);
    case "br":
      return doc.createElement("br");
    case "code":
      return el(doc, "code", [doc.createTextNode(node.v)]);
    case "em":
    case "strong":
      return el(doc, node.t, inlines(doc, node.c));
    case "a": {
      const a = el(doc, "a", inlines(doc, node.c));
      a.setAttribute("href", node.href);
      a.setAttribute("target", "_blank");
      a.setAttribute("rel", "noopener noreferrer nofollow");
      return a;
    }
  }
}

function inlines<N>(doc: DomDocument<N>, nodes: Inline[]): N[] {
  return nodes.map((node) => inline(doc, node));
}

export function renderBlock<N>(doc: DomDocument<N>, block: Block): DomElement<N> {
  switch (block.t) {
    case "p":
      return el(doc, "p", inlines(doc, block.c));
    case "pre": {
      const code = el(doc, "code", [doc.createTextNode(block.v)]);
      const pre = el(doc, "pre", [code]);
      // A focusable, labelled scroll region: long code lines stay readable by keyboard (WCAG 2.1.1).
      pre.setAttribute("tabindex", "0");
      if (block.lang) pre.setAttribute("data-lang", block.lang);
      return pre;
    }
    case "ul":
    case "ol": {
      const list = el(
        doc,
        block.t,
        block.items.map((item) =>
          el(
            doc,
            "li",
            item.map((b) => renderBlock(doc, b)),
          ),
        ),
      );
      if (block.t === "ol" && block.start !== 1) list.setAttribute("start", String(block.start));
      return list;
    }
    case "quote":
      return el(
        doc,
        "blockquote",
        block.c.map((b) => renderBlock(doc, b)),
      );
    case "hr":
      return doc.createElement("hr");
  }
}

export function renderMarkdown<N>(doc: DomDocument<N>, text: string): DomElement<N>[] {
  return parseMarkdownSourced(text).map((b) => renderBlock(doc, b.block));
}

/**
 * Keeps a container in step with a growing markdown text: top-level blocks whose source did not change keep their
 * nodes (so selection, focus and screen-reader position survive), only the changed tail is rebuilt.
 */
export class MarkdownView<N> {
  #blocks: { src: string; node: DomElement<N> }[] = [];

  constructor(
    readonly doc: DomDocument<N>,
    readonly root: DomParent<N>,
  ) {}

  update(text: string): void {
    const next = parseMarkdownSourced(text).map((b, i) => {
      const old = this.#blocks[i];
      return old !== undefined && old.src === b.src
        ? old
        : { src: b.src, node: renderBlock(this.doc, b.block) };
    });
    const changed = next.length !== this.#blocks.length || next.some((b, i) => b !== this.#blocks[i]);
    this.#blocks = next;
    if (changed) {
      this.root.replaceChildren();
      for (const b of next) this.root.append(b.node);
    }
  }
}
