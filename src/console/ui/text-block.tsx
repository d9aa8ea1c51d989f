// Preformatted text (JSON, a prompt, an artifact) in a box that may scroll: the box takes focus, so keyboard users
// can scroll it too (WCAG 2.1.1). Text only: the value is never markup.
import type { ComponentChildren } from "preact";

export function TextBlock(props: { children: ComponentChildren; class?: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1).
    <pre class={props.class} tabIndex={0}>
      {props.children}
    </pre>
  );
}
