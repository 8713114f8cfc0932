import { useEffect, useState } from 'react';
import { api } from '../api.js';
import type { AlertPage } from '../types.js';

/**
 * The signed-in token's in-app alerts, shared by the header's bell and the inbox: one poll
 * for the whole page (every 5 s while visible), refreshed at once after a change.
 */

const POLL_MS = 5000;
const listeners = new Set<(page: AlertPage) => void>();
let current: AlertPage | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
let running = false;

async function load(): Promise<void> {
  clearTimeout(timer);
  if (listeners.size === 0) {
    running = false;
    return;
  }
  running = true;
  try {
    if (document.visibilityState !== 'hidden') {
      current = await api<AlertPage>('GET', '/api/alerts?limit=100');
      for (const listener of listeners) listener(current);
    }
  } catch {
    // the next poll tries again; a 401 signs out through the api module
  }
  if (listeners.size > 0) timer = setTimeout(load, POLL_MS);
  else running = false;
}

/** Fetches the alerts again now (after marking some read). */
export function refreshAlerts(): void {
  void load();
}

/** The alerts as last fetched, live. */
export function useAlerts(): AlertPage | undefined {
  const [page, setPage] = useState<AlertPage | undefined>(current);
  useEffect(() => {
    listeners.add(setPage);
    if (!running) void load();
    else if (current) setPage(current);
    const onVisible = () => {
      if (document.visibilityState === 'visible') void load();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      listeners.delete(setPage);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, []);
  return page;
}

/** Marks one alert read (or all, without an id), then refreshes. */
export async function markRead(id?: number): Promise<void> {
  await api('POST', id === undefined ? '/api/alerts/read' : `/api/alerts/${id}/read`);
  refreshAlerts();
}
