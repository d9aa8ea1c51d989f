// Previous / next for a cursor-paged list (`{items, nextCursor}`), with the page number.
import type { Paged } from "./hooks";

export function Pager<T>(props: { paged: Paged<T>; label: string }) {
  const { paged } = props;
  if (!paged.hasPrevious && !paged.hasNext) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" onClick={paged.previous} disabled={!paged.hasPrevious || paged.loading}>
        Previous page
      </button>
      <span class="muted" aria-live="polite">
        Page {paged.page}
      </span>
      <button type="button" onClick={paged.next} disabled={!paged.hasNext || paged.loading}>
        Next page
      </button>
    </nav>
  );
}
