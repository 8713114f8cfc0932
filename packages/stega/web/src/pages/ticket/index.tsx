import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api.js';
import { PriorityBadge, SlaBadge, StatusBadge } from '../../components/badges.js';
import { EscalationsSection } from '../../components/escalations.js';
import { Freshness, LoadState } from '../../components/layout.js';
import { useLiveConnected } from '../../data/live.js';
import { agentsQuery, policiesQuery, ticketQuery } from '../../data/queries.js';
import { label } from '../../format.js';
import { useNow } from '../../hooks/use-now.js';
import { useTitle } from '../../hooks/use-title.js';
import { NEXT_STATUSES, type Session, type TicketStatus } from '../../types.js';
import type { Names } from '../../words.js';
import { AlertsSection } from './alerts.js';
import { Conversation } from './conversation.js';
import { MailSection } from './mail.js';
import {
  ActivitySection,
  BreachesSection,
  ClockCountdown,
  ClocksSection,
  DetailsSection,
  isWarned,
} from './sections.js';

/** One ticket, live: SLA clocks, breaches and each alert delivery, comments, activity. */
export function TicketPage({ id, session }: { id: number; session: Session }) {
  // while the live stream is open a change arrives as it happens (data/live.ts); the slow poll
  // still brings what does not announce itself (alert deliveries, breaches)
  const live = useLiveConnected();
  const ticket = useQuery({ ...ticketQuery(id), refetchInterval: live ? 30_000 : 3000 });
  const refresh = () => void ticket.refetch();
  const t = ticket.data;
  useTitle(t ? `#${t.id} ${t.subject}` : `Ticket #${id}`);
  const now = useNow();
  const agents = useQuery({ ...agentsQuery(), refetchInterval: 60_000 });
  const policies = useQuery({ ...policiesQuery(), refetchInterval: 60_000 });
  const [notice, setNotice] = useState<{ text: string; error?: boolean } | undefined>();

  if (!t) {
    return (
      <div className="page">
        <p className="breadcrumb">
          <Link to="/tickets">← Tickets</Link>
        </p>
        <h1>Ticket #{id}</h1>
        <LoadState loading={ticket.isPending} error={ticket.error} empty />
      </div>
    );
  }

  const breached = t.breaches.length > 0 || t.clocks.some((c) => c.breached);
  const warned = t.clocks.some((c) => isWarned(c, now));

  const transition = async (to: TicketStatus) => {
    setNotice(undefined);
    try {
      await api('POST', `/api/tickets/${id}/transitions`, { status: to });
      setNotice({ text: `Status changed to ${label(to)}.` });
      refresh();
    } catch (error) {
      setNotice({ text: (error as Error).message, error: true });
    }
  };

  const names: Names = {
    agent: (agentId) => agents.data?.items.find((a) => a.id === agentId)?.name,
    policy: (policyId) =>
      policyId === t.policy_id && t.policy_name
        ? t.policy_name
        : policies.data?.items.find((p) => p.id === policyId)?.name,
  };

  return (
    <div className="page ticket-page">
      <p className="breadcrumb">
        <Link to="/tickets">← Tickets</Link>
      </p>
      <div className="page-head">
        <h1>
          <span className="muted">#{t.id}</span> {t.subject}
        </h1>
        <Link to={`/tickets/${t.id}/edit`} className="button secondary">
          Edit
        </Link>
      </div>
      <p className="badges">
        <StatusBadge status={t.status} /> <PriorityBadge priority={t.priority} />{' '}
        <SlaBadge breached={breached} warned={warned} />
      </p>
      <Freshness updatedAt={ticket.dataUpdatedAt} />
      <p className="ticket-summary small">
        {t.requester_name}
        {t.requester_org ? ` · ${t.requester_org}` : ''} · {t.assignee_name ?? 'Unassigned'}
        {t.clocks.map((clock) => (
          <span key={clock.kind}>
            {' · '}
            {label(clock.kind)}: <ClockCountdown clock={clock} now={now} />
          </span>
        ))}
      </p>

      <div className="transitions" role="group" aria-label="Change status">
        <span className="muted">Move to:</span>
        {NEXT_STATUSES[t.status].map((to) => (
          <button key={to} type="button" className="secondary" onClick={() => transition(to)}>
            {label(to)}
          </button>
        ))}
      </div>
      <p role="status" className={notice?.error ? 'notice error' : 'notice'} hidden={!notice}>
        {notice?.text}
      </p>

      <Conversation ticket={t} session={session} onAdded={refresh} />

      <MailSection ticketId={t.id} />

      <div className="grid-2">
        <DetailsSection ticket={t} />
        <ClocksSection clocks={t.clocks} now={now} />
      </div>

      <BreachesSection breaches={t.breaches} />

      <EscalationsSection ticketId={t.id} escalations={t.escalations} />

      <AlertsSection ticket={t} names={names} />

      <ActivitySection ticket={t} names={names} now={now} />
    </div>
  );
}
