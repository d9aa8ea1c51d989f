// The "Load more" button under a paged list.
import type { Paged } from "./paged";

export function MoreButton(props: { list: Paged<unknown>; what: string }) {
  if (!props.list.more) return null;
  return (
    <button type="button" onClick={props.list.loadMore} disabled={props.list.loading}>
      {props.list.loading ? "Loading…" : `Load more ${props.what}`}
    </button>
  );
}
