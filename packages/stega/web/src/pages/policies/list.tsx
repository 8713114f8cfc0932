import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { PriorityBadge } from '../../components/badges.js';
import { chatChannelNames } from '../../components/chat-channel-drafts.js';
import { DataTable } from '../../components/data-table.js';
import { LoadState } from '../../components/layout.js';
import { calendarsQuery, policiesQuery, teamsQuery } from '../../data/queries.js';
import { formatMinutes } from '../../format.js';
import { useTitle } from '../../hooks/use-title.js';
import type { Policy } from '../../types.js';

/** SLA policies: targets per priority (and organisation), calendar, alert channels. */
export function PoliciesPage({ admin }: { admin: boolean }) {
  useTitle('SLA policies');
  const policies = useQuery({ ...policiesQuery(), refetchInterval: 15_000 });
  const calendars = useQuery({ ...calendarsQuery(), refetchInterval: 60_000 });
  const calendarName = (id: number) =>
    calendars.data?.items.find((c) => c.id === id)?.name ?? `Calendar ${id}`;
  const teams = useQuery({ ...teamsQuery(), refetchInterval: 60_000 });
  const teamName = (id: number) => teams.data?.items.find((t) => t.id === id)?.name ?? `Team ${id}`;
  const items = policies.data?.items ?? [];
  return (
    <div className="page">
      <div className="page-head">
        <h1>SLA policies</h1>
        {admin ? (
          <Link to="/policies/new" className="button primary">
            New policy
          </Link>
        ) : null}
      </div>
      <p className="muted">
        A ticket gets the most specific policy of its priority: for its team and requester
        organisation, else its team, else its organisation, else every team and organisation.
        Targets count business minutes of the policy’s calendar.
      </p>
      <LoadState
        loading={policies.isPending}
        error={policies.error}
        empty={items.length === 0}
        emptyText="No SLA policy yet."
      />
      {items.length > 0 ? (
        <DataTable<Policy>
          label="SLA policies"
          rows={items}
          rowKey={(p) => p.id}
          columns={[
            { header: 'Name', cell: (p) => <Link to={`/policies/${p.id}`}>{p.name}</Link> },
            { header: 'Priority', cell: (p) => <PriorityBadge priority={p.priority} /> },
            { header: 'Organisation', cell: (p) => p.requester_org ?? 'Every organisation' },
            {
              header: 'Team',
              cell: (p) => (p.team_id === null ? 'Every team' : teamName(p.team_id)),
            },
            { header: 'First response', cell: (p) => formatMinutes(p.first_response_minutes) },
            { header: 'Resolution', cell: (p) => formatMinutes(p.resolution_minutes) },
            {
              header: 'Next reply',
              cell: (p) =>
                p.next_reply_minutes === null ? '—' : formatMinutes(p.next_reply_minutes),
            },
            {
              header: 'Calendar',
              cell: (p) => (
                <Link to={`/calendars/${p.calendar_id}`}>{calendarName(p.calendar_id)}</Link>
              ),
            },
            { header: 'Alerts', cell: channelSummary },
          ]}
        />
      ) : null}
    </div>
  );
}

function channelSummary(p: Policy): string {
  const parts: string[] = [];
  if (p.alert_channels.in_app) parts.push('in-app');
  if (p.alert_channels.email_assignee) parts.push('email to the assignee');
  if (p.alert_channels.email.length > 0) parts.push(`${p.alert_channels.email.length} email`);
  if (p.alert_channels.webhooks.length > 0)
    parts.push(`${p.alert_channels.webhooks.length} webhook`);
  // chat channels by the names people gave them (their URLs are secrets)
  parts.push(...chatChannelNames(p.alert_channels));
  const fallback = p.alert_channels.fallback;
  if (fallback) {
    const to = chatChannelNames(fallback);
    parts.push(
      `fallback after ${formatMinutes(fallback.after_minutes)}${to.length > 0 ? ` to ${to.join(', ')}` : ''}`,
    );
  }
  return parts.join(', ') || 'none';
}
