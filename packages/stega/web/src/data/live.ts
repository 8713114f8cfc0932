import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import { keys } from './queries.js';

/** Whether the live stream is open (pages poll slowly while it is, as before when not). */
let connected = false;
const watchers = new Set<() => void>();
function setConnected(value: boolean): void {
  if (connected === value) return;
  connected = value;
  for (const watcher of watchers) watcher();
}
const watch = (watcher: () => void) => {
  watchers.add(watcher);
  return () => {
    watchers.delete(watcher);
  };
};

/** True while GET /api/live is connected: changes arrive as they happen. */
export function useLiveConnected(): boolean {
  return useSyncExternalStore(
    watch,
    () => connected,
    () => false,
  );
}

/** Open again this long after the stream failed for good (EventSource gave up: a 5xx). */
const REOPEN_MS = 5000;

/**
 * The live stream (GET /api/live, server-sent events) while `enabled`: each `ticket` event
 * refreshes that ticket (its page, conversation, activity) and the ticket lists at once; a
 * `resync` refreshes every ticket query. EventSource reconnects by itself after a dropped
 * connection or the server's periodic end; after a refusal it is opened again later. It
 * carries the session cookie only, so a tab signed in with an API token (kept in this tab,
 * sent as a header) does without it and polls as before.
 */
export function useLiveUpdates(enabled: boolean): void {
  const client = useQueryClient();
  useEffect(() => {
    if (!enabled || typeof EventSource === 'undefined') return;
    let source: EventSource | undefined;
    let reopen: ReturnType<typeof setTimeout> | undefined;
    const open = () => {
      source = new EventSource('/api/live');
      source.addEventListener('ready', () => setConnected(true));
      source.addEventListener('ticket', (event) => {
        const id = Number(
          (JSON.parse((event as MessageEvent<string>).data) as { ticket_id: number }).ticket_id,
        );
        void client.invalidateQueries({ queryKey: [...keys.tickets, id] });
        void client.invalidateQueries({ queryKey: [...keys.tickets, 'list'] });
      });
      source.addEventListener('resync', () => {
        void client.invalidateQueries({ queryKey: keys.tickets });
      });
      source.onerror = () => {
        setConnected(false);
        if (source?.readyState === EventSource.CLOSED) {
          source.close();
          reopen = setTimeout(open, REOPEN_MS);
        }
      };
    };
    open();
    return () => {
      clearTimeout(reopen);
      source?.close();
      setConnected(false);
    };
  }, [enabled, client]);
}
