// Small shared hooks: load data for a screen, and run an action with its pending/error state.
import { useCallback, useEffect, useState } from "preact/hooks";
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
  clear: () => void;
}

/** Wraps a mutation: `run` answers true when it succeeded; its error is kept for the form to show. */
export function useAction<A extends unknown[]>(act: (...args: A) => Promise<unknown>): Action<A> {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async (...args: A): Promise<boolean> => {
    setPending(true);
    setError(undefined);
    try {
      await act(...args);
      return true;
    } catch (e) {
      setError(describeError(e));
      return false;
    } finally {
      setPending(false);
    }
  };
  return { run, pending, error, clear: () => setError(undefined) };
}
