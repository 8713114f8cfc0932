import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api.js';
import { alertsQuery, keys } from './queries.js';

/** How often the bell and the inbox ask for new alerts while the tab is visible. */
const POLL_MS = 5000;

/** The signed-in token's in-app alerts, live: the header's bell and the inbox share one poll. */
export function useAlerts() {
  return useQuery({ ...alertsQuery(), refetchInterval: POLL_MS });
}

/** Marks one alert read (or all, without an id); the bell and the inbox refresh at once. */
export function useMarkRead() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number | undefined) =>
      api('POST', id === undefined ? '/api/alerts/read' : `/api/alerts/${id}/read`),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.alerts }),
  });
}
