import { queryOptions } from '@tanstack/react-query';
import { api } from '../api.js';
import type {
  Agent,
  AlertPage,
  Calendar,
  EscalationPolicy,
  MailboxAddress,
  Policy,
  Team,
  TicketDetail,
  TicketPage,
  Token,
} from '../types.js';

/**
 * Query keys and fetchers of the API's resources, one place for each: pages add their own poll
 * interval (`useQuery({ ...agentsQuery(), refetchInterval: 60_000 })`), mutations invalidate by
 * the key's first part (`keys.tickets` covers every list and every ticket).
 */
export const keys = {
  agents: ['agents'] as const,
  teams: ['teams'] as const,
  tokens: ['tokens'] as const,
  calendars: ['calendars'] as const,
  policies: ['sla-policies'] as const,
  escalationPolicies: ['escalation-policies'] as const,
  tickets: ['tickets'] as const,
  alerts: ['alerts'] as const,
  reports: ['reports'] as const,
  operations: ['operations'] as const,
  achievement: ['sla-achievement'] as const,
  mailboxAddresses: ['mailbox-addresses'] as const,
  schedules: ['schedules'] as const,
};

/**
 * A GET of `path` under `queryKey`, aborted when no component wants it any more. `cache`
 * `no-cache` revalidates with the last ETag; `staleTime` how long an answer serves a new page.
 */
export function getQuery<T>(
  queryKey: readonly unknown[],
  path: string,
  options: { cache?: RequestCache; staleTime?: number } = {},
) {
  const { cache, staleTime } = options;
  return queryOptions({
    queryKey,
    queryFn: ({ signal }) =>
      api<T>('GET', path, undefined, { signal, ...(cache ? { cache } : {}) }),
    ...(staleTime !== undefined ? { staleTime } : {}),
  });
}

/** A GET keyed by its group and its path (with the query string): one cache entry per address. */
export const pathQuery = <T>(group: readonly string[], path: string) =>
  getQuery<T>([...group, path], path);

/**
 * Reference lists (agents, teams, calendars, policies) change rarely and by this app's own
 * saves, which invalidate them: a page that mounts within half a minute of the last answer
 * takes it from the cache; each page's poll still refreshes them at its interval.
 */
const REFERENCE = { staleTime: 30_000 } as const;

export const agentsQuery = () =>
  getQuery<{ items: Agent[] }>(keys.agents, '/api/agents', REFERENCE);
/** Every agent, the deactivated ones too (the Agents page; pickers use agentsQuery). */
export const allAgentsQuery = () =>
  getQuery<{ items: Agent[] }>([...keys.agents, 'all'], '/api/agents?include_deactivated=true');
export const teamsQuery = () => getQuery<{ items: Team[] }>(keys.teams, '/api/teams', REFERENCE);
/** The mailboxes an agent can email a customer from. */
export const mailboxAddressesQuery = () =>
  getQuery<{ items: MailboxAddress[] }>(keys.mailboxAddresses, '/api/mailbox-addresses', REFERENCE);
export const tokensQuery = () => getQuery<{ items: Token[] }>(keys.tokens, '/api/tokens');
export const calendarsQuery = () =>
  getQuery<{ items: Calendar[] }>([...keys.calendars, 'list'], '/api/calendars', REFERENCE);
export const calendarQuery = (id: number) =>
  getQuery<Calendar>([...keys.calendars, id], `/api/calendars/${id}`);
export const policiesQuery = () =>
  getQuery<{ items: Policy[] }>([...keys.policies, 'list'], '/api/sla-policies', REFERENCE);
export const policyQuery = (id: number) =>
  getQuery<Policy>([...keys.policies, id], `/api/sla-policies/${id}`);
export const escalationPoliciesQuery = () =>
  getQuery<{ items: EscalationPolicy[] }>(keys.escalationPolicies, '/api/escalation-policies');
/**
 * A ticket with its newest comments and activity. The live refresh revalidates with the last
 * ETag (`no-cache`): an unchanged ticket costs a 304 and no body.
 */
export const ticketQuery = (id: number) =>
  getQuery<TicketDetail>([...keys.tickets, id], `/api/tickets/${id}`, { cache: 'no-cache' });
/**
 * A page of the ticket list. The live refresh revalidates with the last ETag (`no-cache`), so
 * an unchanged list costs the server a 304 and the browser nothing.
 */
export const ticketListQuery = (search: string) =>
  getQuery<TicketPage>([...keys.tickets, 'list', search], `/api/tickets${search}`, {
    cache: 'no-cache',
  });
/** The signed-in token's in-app alerts: the bell and the inbox share this one query. */
export const alertsQuery = () => getQuery<AlertPage>(keys.alerts, '/api/alerts?limit=100');
