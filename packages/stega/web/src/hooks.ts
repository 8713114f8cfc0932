import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { ApiError, serverNow } from './api.js';

export interface Polled<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  /** Fetches again now (after a change the user made). */
  refresh: () => void;
  /** When the data was last fetched successfully (server time, ms). */
  updatedAt: number | undefined;
}

/**
 * Fetches `load()` now and every `intervalMs` while the page is visible (short polling keeps
 * every view live without a reload). A change of `key` starts over.
 */
export function usePoll<T>(
  load: (signal: AbortSignal) => Promise<T>,
  intervalMs: number,
  key = '',
): Polled<T> {
  const [state, setState] = useState<Omit<Polled<T>, 'refresh'>>({
    data: undefined,
    error: undefined,
    loading: true,
    updatedAt: undefined,
  });
  const loadRef = useRef(load);
  loadRef.current = load;
  const [tick, setTick] = useState(0);
  const refresh = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let controller: AbortController | undefined;
    const run = async () => {
      if (stopped) return;
      if (document.visibilityState === 'hidden') {
        timer = setTimeout(run, intervalMs);
        return;
      }
      controller = new AbortController();
      try {
        const data = await loadRef.current(controller.signal);
        if (!stopped) setState({ data, error: undefined, loading: false, updatedAt: serverNow() });
      } catch (error) {
        if (stopped || (error as Error).name === 'AbortError') return;
        setState((s) => ({ ...s, error: error as Error, loading: false }));
      }
      if (!stopped) timer = setTimeout(run, intervalMs);
    };
    setState((s) => ({ ...s, loading: true }));
    void run();
    const onVisible = () => {
      if (document.visibilityState === 'visible') {
        clearTimeout(timer);
        void run();
      }
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [key, tick, intervalMs]);

  return { ...state, refresh };
}

// One shared one-second clock for every countdown on the page.
const clockListeners = new Set<() => void>();
let clockTimer: ReturnType<typeof setInterval> | undefined;
let clockValue = serverNow();
function subscribeClock(listener: () => void) {
  clockListeners.add(listener);
  if (!clockTimer) {
    clockValue = serverNow();
    clockTimer = setInterval(() => {
      clockValue = serverNow();
      for (const l of clockListeners) l();
    }, 1000);
  }
  return () => {
    clockListeners.delete(listener);
    if (clockListeners.size === 0 && clockTimer) {
      clearInterval(clockTimer);
      clockTimer = undefined;
    }
  };
}

/** The server's time, updated every second. */
export function useNow(): number {
  return useSyncExternalStore(subscribeClock, () => clockValue);
}

/** Sets the document title: "<title> · Stega". */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Stega` : 'Stega';
  }, [title]);
}
