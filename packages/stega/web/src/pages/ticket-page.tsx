import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { ApiError, api, type Issue } from '../api.js';
import { DeliveryProgress, PriorityBadge, SlaBadge, StatusBadge } from '../components/badges.js';
import { Countdown } from '../components/countdown.js';
import { EscalationsSection } from '../components/escalations.js';
import { Field } from '../components/field.js';
import { Freshness, LoadState, Section, TableRegion } from '../components/layout.js';
import { agentsQuery, policiesQuery, ticketQuery } from '../data/queries.js';
import { formatDateTime, formatDuration, formatMinutes, label } from '../format.js';
import { useNow } from '../hooks/use-now.js';
import { useTitle } from '../hooks/use-title.js';
import {
  type Clock,
  NEXT_STATUSES,
  type Session,
  type TicketDetail,
  type TicketStatus,
} from '../types.js';
import { activityText, type Names, recipientLabel } from '../words.js';

/** One ticket, live: SLA clocks, breaches and each alert delivery, comments, activity. */
export function TicketPage({ id, session }: { id: number; session: Session }) {
  const ticket = useQuery({ ...ticketQuery(id), refetchInterval: 3000 });
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
  const warned = t.clocks.some(
    (c) => c.state === 'running' && now >= Date.parse(c.warn_at) && now < Date.parse(c.due_at),
  );

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
  const firstResponse = t.clocks.find((c) => c.kind === 'first_response');

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
            {label(clock.kind)}:{' '}
            <Countdown
              name={label(clock.kind)}
              dueAt={clock.due_at}
              state={clock.state}
              pausedSince={clock.paused_since}
              stoppedAt={clock.stopped_at}
              warned={
                clock.state === 'running' &&
                now >= Date.parse(clock.warn_at) &&
                now < Date.parse(clock.due_at)
              }
            />
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

      <div className="grid-2">
        <Section id="details" title="Details">
          <dl className="details">
            <dt>Requester</dt>
            <dd>
              {t.requester_name} &lt;{t.requester_email}&gt;
            </dd>
            <dt>Organisation</dt>
            <dd>{t.requester_org ?? '—'}</dd>
            <dt>Assignee</dt>
            <dd>{t.assignee_name ?? 'Unassigned'}</dd>
            <dt>Team</dt>
            <dd data-testid="ticket-team">{t.team_name ?? '—'}</dd>
            <dt>SLA policy</dt>
            <dd>
              {t.policy_id ? (
                <Link to={`/policies/${t.policy_id}`}>
                  {t.policy_name ?? `Policy #${t.policy_id}`}
                </Link>
              ) : (
                'None applies'
              )}
            </dd>
            <dt>Created</dt>
            <dd>{formatDateTime(t.created_at)}</dd>
            <dt>First response</dt>
            <dd data-testid="first-response">
              {firstResponseText(t.first_responded_at, firstResponse)}
            </dd>
            <dt>Resolved</dt>
            <dd>{formatDateTime(t.resolved_at)}</dd>
            <dt>Closed</dt>
            <dd>{formatDateTime(t.closed_at)}</dd>
          </dl>
        </Section>
        <Section id="clocks" title="SLA clocks">
          {t.clocks.length === 0 ? <p className="muted">No SLA policy applies.</p> : null}
          {t.clocks.map((clock) => (
            <ClockCard key={clock.kind} clock={clock} now={now} />
          ))}
        </Section>
      </div>

      <Section id="breaches" title={`Breaches (${t.breaches.length})`}>
        {t.breaches.length === 0 ? (
          <p className="muted">No breach recorded.</p>
        ) : (
          <ul className="plain breaches">
            {t.breaches.map((breach) => (
              <li key={breach.id} className="breach" data-breach-id={breach.id}>
                <strong>{label(breach.kind)}</strong> target missed: due{' '}
                {formatDateTime(breach.due_at)}, detected {formatDateTime(breach.detected_at)}{' '}
                <span className="muted">(breach #{breach.id})</span>
              </li>
            ))}
          </ul>
        )}
      </Section>

      <EscalationsSection ticketId={t.id} escalations={t.escalations} />

      <AlertsSection ticket={t} names={names} />

      <Section id="activity" title="Activity">
        <ol className="activity">
          {[...t.activity].reverse().map((a) => (
            <li key={a.id}>
              <time dateTime={a.at}>{formatDateTime(a.at)}</time>
              <span>
                <strong>{a.actor}</strong> {activityText(a.action, a.details, names)}
              </span>
            </li>
          ))}
        </ol>
      </Section>
    </div>
  );
}

/**
 * The first response in words, the same answer the clock gives: when the reply came, or that
 * the ticket was resolved before any reply (the clock stopped there: met or missed).
 */
function firstResponseText(respondedAt: string | null, clock: Clock | undefined): string {
  if (respondedAt) {
    const late = clock && Date.parse(respondedAt) > Date.parse(clock.due_at);
    return `${formatDateTime(respondedAt)}${clock ? (late ? ' (target missed)' : ' (target met)') : ''}`;
  }
  if (clock?.state === 'stopped' && clock.stopped_at) {
    const missed = Date.parse(clock.stopped_at) > Date.parse(clock.due_at);
    return `No reply: resolved ${formatDateTime(clock.stopped_at)} first (target ${missed ? 'missed' : 'met'})`;
  }
  return 'Not yet';
}

/**
 * Every alert of the ticket (breaches and warnings) and each of its deliveries, listed once:
 * channel, recipient in words, outcome, attempts and the replica that made it.
 */
function AlertsSection({ ticket, names }: { ticket: TicketDetail; names: Names }) {
  const alertName = (type: string, id: number) => {
    if (type === 'escalation') {
      for (const chain of ticket.escalations) {
        const level = chain.levels.find((l) => l.firing_id === id);
        if (level) return `${label(chain.kind)} escalation, level ${level.level}`;
      }
      return 'Escalation level';
    }
    if (type === 'breach') {
      const breach = ticket.breaches.find((b) => b.id === id);
      return `${breach ? label(breach.kind) : 'SLA'} breach`;
    }
    const warning = ticket.warnings.find((w) => w.id === id);
    return `${warning ? label(warning.kind) : 'SLA'} warning${
      warning ? ` (${Math.round(warning.elapsed_share * 100)}% used)` : ''
    }`;
  };
  return (
    <Section id="deliveries" title={`Alerts and deliveries (${ticket.deliveries.length})`}>
      {ticket.warnings.length > 0 ? (
        <ul className="plain warnings">
          {ticket.warnings.map((w) => (
            <li key={w.id}>
              {label(w.kind)} warning: {Math.round(w.elapsed_share * 100)}% of the target used,
              detected {formatDateTime(w.detected_at)} (due {formatDateTime(w.due_at)})
            </li>
          ))}
        </ul>
      ) : null}
      {ticket.deliveries.length === 0 ? (
        <p className="muted">
          {ticket.breaches.length + ticket.warnings.length > 0
            ? 'Waiting for an sla-breach-worker to deliver the alerts…'
            : 'No alert for this ticket yet.'}
        </p>
      ) : (
        <TableRegion label="Alert deliveries">
          <table className="responsive deliveries">
            <caption className="visually-hidden">
              Each delivery of this ticket's alerts, with the replica that made it
            </caption>
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">Channel</th>
                <th scope="col">Recipient</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Delivered by</th>
                <th scope="col">Delivered at</th>
              </tr>
            </thead>
            <tbody>
              {ticket.deliveries.map((d) => (
                <tr
                  key={d.id}
                  data-delivery-id={d.id}
                  data-alert={`${d.alert_type}-${d.alert_id}`}
                  data-channel={d.channel}
                  data-state={d.state}
                >
                  <td data-label="Alert">{alertName(d.alert_type, d.alert_id)}</td>
                  <td data-label="Channel">{channelLabel(d.channel)}</td>
                  <td data-label="Recipient" className="break">
                    {recipientLabel(d.recipient, names)}
                  </td>
                  <td data-label="Status">
                    <DeliveryProgress d={d} />
                  </td>
                  <td data-label="Attempts" className="num">
                    {d.attempts}
                  </td>
                  <td data-label="Delivered by" className="replica">
                    {d.delivered_by ?? '—'}
                  </td>
                  <td data-label="Delivered at">{formatDateTime(d.delivered_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </Section>
  );
}

function ClockCard({ clock, now }: { clock: Clock; now: number }) {
  const warned =
    clock.state === 'running' && now >= Date.parse(clock.warn_at) && now < Date.parse(clock.due_at);
  const pausedNow =
    clock.state === 'paused' && clock.paused_since
      ? Math.max(0, now - Date.parse(clock.paused_since))
      : 0;
  return (
    <div className={`clock clock-${clock.state}`} data-clock={clock.kind}>
      <h3>{label(clock.kind)}</h3>
      <p className="clock-countdown">
        <Countdown
          name={label(clock.kind)}
          dueAt={clock.due_at}
          state={clock.state}
          pausedSince={clock.paused_since}
          stoppedAt={clock.stopped_at}
          warned={warned}
        />{' '}
        {clock.breached ? <span className="badge sla-breached">Breached</span> : null}
      </p>
      <dl className="details compact">
        <dt>State</dt>
        <dd>{label(clock.state)}</dd>
        <dt>Target</dt>
        <dd>{formatMinutes(clock.target_minutes)} of business time</dd>
        <dt>Started</dt>
        <dd>{formatDateTime(clock.started_at)}</dd>
        <dt>Warns at</dt>
        <dd>{formatDateTime(clock.warn_at)}</dd>
        <dt>Due</dt>
        <dd>
          {formatDateTime(clock.due_at)}
          {clock.state === 'paused' ? ' (provisional while paused)' : ''}
        </dd>
        <dt>Paused time</dt>
        <dd>
          {formatDuration(clock.paused_business_minutes * 60_000)} of business time
          {clock.paused_since
            ? `; paused since ${formatDateTime(clock.paused_since)} (${formatDuration(pausedNow)} so far)`
            : ''}
        </dd>
        {clock.stopped_at ? (
          <>
            <dt>Stopped</dt>
            <dd>{formatDateTime(clock.stopped_at)}</dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}

function Conversation({
  ticket,
  session,
  onAdded,
}: {
  ticket: TicketDetail;
  session: Session;
  onAdded: () => void;
}) {
  const [body, setBody] = useState('');
  const [publicReply, setPublicReply] = useState(true);
  const [fromRequester, setFromRequester] = useState(false);
  const [issues, setIssues] = useState<Issue[]>([]);
  const [busy, setBusy] = useState(false);
  // a token of no agent (the configured admin token) picks the agent it writes as
  const picksAgent = session.agent_id === null;
  const agents = useQuery({ ...agentsQuery(), enabled: picksAgent, refetchInterval: 60_000 });
  const [chosen, setChosen] = useState<string | undefined>(() => readReplyAs());
  const agentList = agents.data?.items ?? [];
  const replyAs =
    chosen !== undefined && (chosen === '' || agentList.some((a) => String(a.id) === chosen))
      ? chosen
      : String(agentList[0]?.id ?? '');
  const replyAgent = agentList.find((a) => String(a.id) === replyAs);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setIssues([]);
    try {
      await api(
        'POST',
        `/api/tickets/${ticket.id}/comments`,
        fromRequester
          ? { body, from_requester: true }
          : {
              body,
              public_reply: publicReply,
              ...(picksAgent && replyAs !== '' ? { agent_id: Number(replyAs) } : {}),
            },
      );
      setBody('');
      setFromRequester(false);
      onAdded();
    } catch (error) {
      setIssues(
        error instanceof ApiError && error.issues.length > 0
          ? error.issues
          : [{ path: 'body', message: (error as Error).message }],
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section id="conversation" title={`Conversation (${ticket.comments.length})`}>
      <form onSubmit={submit} noValidate className="form">
        {picksAgent ? (
          <Field
            path="agent_id"
            label="Reply as"
            issues={issues}
            className="reply-as"
            hint={
              replyAgent
                ? `As ${replyAgent.name}: the first public reply is the ticket’s first response.`
                : 'As no agent: a comment of yours is not a first response.'
            }
          >
            {(aria) => (
              <select
                {...aria}
                value={replyAs}
                onChange={(e) => {
                  setChosen(e.target.value);
                  saveReplyAs(e.target.value);
                }}
              >
                {agentList.map((a) => (
                  <option key={a.id} value={String(a.id)}>
                    {a.name}
                  </option>
                ))}
                <option value="">No agent ({session.name})</option>
              </select>
            )}
          </Field>
        ) : null}
        <Field
          path="body"
          label="Add a comment"
          issues={issues}
          hint={picksAgent ? undefined : 'Your first public reply is the ticket’s first response.'}
        >
          {(aria) => (
            <textarea {...aria} rows={3} value={body} onChange={(e) => setBody(e.target.value)} />
          )}
        </Field>
        <label className="check">
          <input
            type="checkbox"
            checked={publicReply}
            onChange={(e) => setPublicReply(e.target.checked)}
          />
          Public reply (visible to the requester)
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={fromRequester}
            onChange={(e) => setFromRequester(e.target.checked)}
          />
          From the requester (a customer reply: the next agent reply is due within the policy’s
          next-reply target)
        </label>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Add comment
          </button>
        </div>
      </form>
      <ol className="comments" aria-label="Thread, newest first">
        {[...ticket.comments].reverse().map((c) => (
          <li key={c.id} className={c.public_reply ? 'reply' : 'note'}>
            <p className="small muted">
              <strong>{c.author_name}</strong> · {formatDateTime(c.created_at)}
              {c.from_requester
                ? ' · from the requester'
                : c.public_reply
                  ? ' · reply to the requester'
                  : ' · internal note'}
            </p>
            <p className="comment-body">{c.body}</p>
          </li>
        ))}
        {ticket.description ? (
          <li className="request">
            <p className="small muted">
              <strong>{ticket.requester_name}</strong> · {formatDateTime(ticket.created_at)} · the
              request
            </p>
            <p className="comment-body">{ticket.description}</p>
          </li>
        ) : null}
      </ol>
    </Section>
  );
}

const REPLY_AS = 'stega.replyAs';

/** The agent a token of no agent last chose to reply as ('' for none), kept per browser. */
function readReplyAs(): string | undefined {
  try {
    return localStorage.getItem(REPLY_AS) ?? undefined;
  } catch {
    return undefined;
  }
}

function saveReplyAs(value: string): void {
  try {
    localStorage.setItem(REPLY_AS, value);
  } catch {
    // storage may be unavailable (private mode); the choice then lasts for the page
  }
}

const CHANNEL_LABELS: Record<string, string> = {
  in_app: 'In-app',
  email: 'Email',
  webhook: 'Webhook',
  slack: 'Slack',
  teams: 'Microsoft Teams',
  pagerduty: 'PagerDuty',
};

export function channelLabel(channel: string): string {
  return CHANNEL_LABELS[channel] ?? channel;
}
