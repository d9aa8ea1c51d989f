// A data table that scrolls sideways on narrow screens: the scroll box is a labelled region that takes focus, so
// keyboard users can scroll it too.
import type { ComponentChildren } from "preact";

export function Table(props: {
  /** Names the table (its caption, read by screen readers) and its scroll region. */
  label: string;
  /** Column headings. */
  head: ComponentChildren[];
  children: ComponentChildren;
  /** While rows are being replaced (the next page loading). */
  busy?: boolean;
}) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1).
    <section class="table-wrap" aria-label={props.label} tabIndex={0}>
      <table aria-busy={props.busy ? true : undefined}>
        <caption class="sr-only">{props.label}</caption>
        <thead>
          <tr>
            {props.head.map((heading, i) => (
              <th key={i} scope="col">
                {heading}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </section>
  );
}
