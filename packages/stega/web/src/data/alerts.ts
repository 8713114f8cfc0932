import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api.js';
import type { Alert, AlertPage } from '../types.js';
import { alertsQuery, keys } from './queries.js';

/** How often the bell and the inbox ask for new alerts while the tab is visible. */
const POLL_MS = 5000;

/** The signed-in token's in-app alerts, live: the header's bell and the inbox share one poll. */
export function useAlerts() {
  return useQuery({ ...alertsQuery(), refetchInterval: POLL_MS });
}

/** Marks alerts read (all, without ids); the bell and the inbox refresh at once. */
export function useMarkRead() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (ids: number[] | undefined) => {
      if (ids === undefined) await api('POST', '/api/alerts/read');
      else await Promise.all(ids.map((id) => api('POST', `/api/alerts/${id}/read`)));
    },
    onSuccess: () => client.invalidateQueries({ queryKey: keys.alerts }),
  });
}

/**
 * One alert as the inbox shows it. An alert to an unassigned ticket's team is stored once per
 * member (each reads their own); an admin, who sees everyone's, sees it once with how many
 * members have read it. An alert to the shared team inbox (no team members to name) has one
 * read state for everyone.
 */
export interface InboxEntry {
  key: string;
  /** The newest copy: its ticket, message and time. */
  alert: Alert;
  /** The copies of this alert on the page, one per recipient. */
  copies: Alert[];
  /** Unread while any recipient's copy is. */
  unread: boolean;
}

export function inboxEntries(items: Alert[]): InboxEntry[] {
  const byAlert = new Map<string, InboxEntry>();
  for (const alert of items) {
    const key = `${alert.alert_type}:${alert.alert_id}`;
    const entry = byAlert.get(key);
    if (entry) {
      entry.copies.push(alert);
      entry.unread ||= alert.read_at === null;
    } else {
      byAlert.set(key, { key, alert, copies: [alert], unread: alert.read_at === null });
    }
  }
  return [...byAlert.values()];
}

/**
 * How many alerts are unread, each counted once: the API counts every recipient's copy, so the
 * copies of one alert on this page beyond the first are taken off.
 */
export function unreadCount(page: AlertPage): number {
  const entries = inboxEntries(page.items);
  const unreadCopies = page.items.filter((a) => a.read_at === null).length;
  const unreadEntries = entries.filter((e) => e.unread).length;
  return Math.max(0, page.unread - (unreadCopies - unreadEntries));
}
