// A list read page by page with "Load more", reloadable after a change.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Page } from "../../client/http";
import { describeError } from "../api";

export interface Paged<T> {
  items: T[];
  more: boolean;
  loading: boolean;
  error: string | undefined;
  loadMore: () => void;
  /** Reads the first page again (after a create, revoke or delete). */
  reload: () => void;
}

export function usePaged<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  deps: unknown[] = [],
): Paged<T> {
  const [items, setItems] = useState<T[]>([]);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>(undefined);
  const generation = useRef(0);
  const read = async (cursor: string | undefined) => {
    const mine = cursor ? generation.current : ++generation.current;
    setLoading(true);
    setError(undefined);
    try {
      const page = await fetchPage(cursor);
      if (mine !== generation.current) return;
      setItems((before) => (cursor ? [...before, ...page.items] : page.items));
      setNext(page.nextCursor);
    } catch (e) {
      if (mine === generation.current) setError(describeError(e));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  };
  useEffect(() => {
    void read(undefined);
  }, deps);
  return {
    items,
    more: next !== undefined,
    loading,
    error,
    loadMore: () => void read(next),
    reload: () => void read(undefined),
  };
}
