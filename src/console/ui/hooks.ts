// Small shared hooks: load data for a screen, and run an action with its pending/error state.
import { useCallback, useEffect, useState } from "preact/hooks";
import type { Page } from "../../client/http";
import { describeError } from "../api";

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` on mount and whenever `deps` change; `reload()` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error: describeError(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Action<A extends unknown[]> {
  run: (...args: A) => Promise<boolean>;
  pending: boolean;
  error: string | undefined;
  /** The thrown error itself, for a form that shows a 400's `details` field by field. */
  failure: unknown;
  clear: () => void;
}

/** Wraps a mutation: `run` answers true when it succeeded; its error is kept for the form to show. */
export function useAction<A extends unknown[]>(act: (...args: A) => Promise<unknown>): Action<A> {
  const [pending, setPending] = useState(false);
  const [failure, setFailure] = useState<unknown>(undefined);
  const run = async (...args: A): Promise<boolean> => {
    setPending(true);
    setFailure(undefined);
    try {
      await act(...args);
      return true;
    } catch (e) {
      setFailure(e ?? new Error("failed"));
      return false;
    } finally {
      setPending(false);
    }
  };
  return {
    run,
    pending,
    error: failure === undefined ? undefined : describeError(failure),
    failure,
    clear: () => setFailure(undefined),
  };
}

export interface Paged<T> extends Loaded<Page<T>> {
  items: T[];
  /** 1-based. */
  page: number;
  hasNext: boolean;
  hasPrevious: boolean;
  next: () => void;
  previous: () => void;
}

/**
 * A cursor-paged list: the cursors of the pages before this one are kept, so "previous" asks for exactly the page
 * it showed. `deps` changing (a filter) starts again from the first page.
 */
export function usePaged<T>(
  load: (cursor: string | undefined) => Promise<Page<T>>,
  deps: unknown[],
): Paged<T> {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  useEffect(() => setCursors([undefined]), deps);
  const cursor = cursors[cursors.length - 1];
  const depth = cursors.length;
  // The page number travels with its rows: while the next page loads, the shown rows keep their own number.
  const loaded = useLoad(() => load(cursor).then((data) => ({ data, page: depth })), [...deps, cursor]);
  const data = loaded.data?.data;
  const nextCursor = data?.nextCursor;
  const shownPage = loaded.data?.page ?? 1;
  return {
    ...loaded,
    data,
    items: data?.items ?? [],
    page: shownPage,
    hasNext: nextCursor !== undefined && shownPage === depth,
    hasPrevious: depth > 1,
    next: () => {
      if (nextCursor !== undefined && shownPage === depth) setCursors((list) => [...list, nextCursor]);
    },
    previous: () => setCursors((list) => (list.length > 1 ? list.slice(0, -1) : list)),
  };
}
