import { type FormEvent, useState } from 'react';
import { ApiError, api, type Issue } from '../api.js';
import {
  DeliveryBadge,
  DeliveryOutcome,
  PriorityBadge,
  SlaBadge,
  StatusBadge,
} from '../components/badges.js';
import { Countdown } from '../components/countdown.js';
import { Field } from '../components/field.js';
import { Freshness, LoadState, Section, TableRegion } from '../components/layout.js';
import { formatDateTime, formatMinutes, label } from '../format.js';
import { useNow, usePoll, useTitle } from '../hooks.js';
import { Link } from '../router.js';
import {
  type Agent,
  type Breach,
  type Clock,
  NEXT_STATUSES,
  type Session,
  type TicketDetail,
  type TicketStatus,
} from '../types.js';

/** One ticket, live: SLA clocks, breaches and each alert delivery, comments, activity. */
export function TicketPage({ id, session }: { id: number; session: Session }) {
  const ticket = usePoll(
    (signal) => api<TicketDetail>('GET', `/api/tickets/${id}`, undefined, { signal }),
    3000,
    String(id),
  );
  const t = ticket.data;
  useTitle(t ? `#${t.id} ${t.subject}` : `Ticket #${id}`);
  const now = useNow();
  const [notice, setNotice] = useState<{ text: string; error?: boolean } | undefined>();

  if (!t) {
    return (
      <div className="page">
        <p className="breadcrumb">
          <Link to="/tickets">← Tickets</Link>
        </p>
        <h1>Ticket #{id}</h1>
        <LoadState loading={ticket.loading} error={ticket.error} empty />
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
      ticket.refresh();
    } catch (error) {
      setNotice({ text: (error as Error).message, error: true });
    }
  };

  return (
    <div className="page">
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
      <Freshness updatedAt={ticket.updatedAt} />

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
                <Link to={`/policies/${t.policy_id}`}>Policy {t.policy_id}</Link>
              ) : (
                '—'
              )}
            </dd>
            <dt>Created</dt>
            <dd>{formatDateTime(t.created_at)}</dd>
            <dt>First response</dt>
            <dd>{formatDateTime(t.first_responded_at)}</dd>
            <dt>Resolved</dt>
            <dd>{formatDateTime(t.resolved_at)}</dd>
            <dt>Closed</dt>
            <dd>{formatDateTime(t.closed_at)}</dd>
          </dl>
          {t.description ? <p className="description">{t.description}</p> : null}
        </Section>
        <Section id="clocks" title="SLA clocks">
          {t.clocks.length === 0 ? <p className="muted">No SLA policy applies.</p> : null}
          {t.clocks.map((clock) => (
            <ClockCard key={clock.kind} clock={clock} now={now} />
          ))}
        </Section>
      </div>

      <Section id="breaches" title={`Breaches (${t.breaches.length})`}>
        {t.breaches.length === 0 ? <p className="muted">No breach recorded.</p> : null}
        {t.breaches.map((breach) => (
          <BreachCard key={breach.id} breach={breach} />
        ))}
      </Section>

      <Section id="deliveries" title="Alert deliveries">
        {t.deliveries.length === 0 ? (
          <p className="muted">No alert delivered for this ticket yet.</p>
        ) : (
          <TableRegion label="Alert deliveries">
            <table className="responsive">
              <caption className="visually-hidden">
                Every alert delivery of this ticket, with the replica that made it
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
                  <th scope="col">Batch</th>
                </tr>
              </thead>
              <tbody>
                {t.deliveries.map((d) => (
                  <tr key={d.id}>
                    <td data-label="Alert">
                      {label(d.alert_type)} {d.alert_id}
                    </td>
                    <td data-label="Channel">{channelLabel(d.channel)}</td>
                    <td data-label="Recipient" className="break">
                      {d.recipient}
                    </td>
                    <td data-label="Status">
                      <DeliveryOutcome status={d.status} lastError={d.last_error} />
                    </td>
                    <td data-label="Attempts" className="num">
                      {d.attempts}
                    </td>
                    <td data-label="Delivered by" className="replica">
                      {d.delivered_by ?? '—'}
                    </td>
                    <td data-label="Delivered at">{formatDateTime(d.delivered_at)}</td>
                    <td data-label="Batch" className="num">
                      {d.batch_id ?? '—'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
      </Section>

      {t.warnings.length > 0 ? (
        <Section id="warnings" title={`Warnings (${t.warnings.length})`}>
          <ul className="plain">
            {t.warnings.map((w) => (
              <li key={w.id}>
                {label(w.kind)}: {Math.round(w.elapsed_share * 100)}% of the target used, detected{' '}
                {formatDateTime(w.detected_at)} (due {formatDateTime(w.due_at)})
              </li>
            ))}
          </ul>
        </Section>
      ) : null}

      <div className="grid-2">
        <Comments ticket={t} session={session} onAdded={ticket.refresh} />
        <Section id="activity" title="Activity">
          <ol className="activity">
            {[...t.activity].reverse().map((a) => (
              <li key={a.id}>
                <time dateTime={a.at}>{formatDateTime(a.at)}</time>
                <span>
                  <strong>{a.actor}</strong> {activityText(a.action, a.details)}
                </span>
              </li>
            ))}
          </ol>
        </Section>
      </div>
    </div>
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
          {formatMinutes(clock.paused_business_minutes)} of business time
          {clock.paused_since
            ? `; paused since ${formatDateTime(clock.paused_since)} (${formatMinutes(pausedNow / 60_000)} so far)`
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

function BreachCard({ breach }: { breach: Breach }) {
  return (
    <article className="breach" data-breach-id={breach.id} aria-labelledby={`breach-${breach.id}`}>
      <h3 id={`breach-${breach.id}`}>
        {label(breach.kind)} breach <span className="muted">#{breach.id}</span>
      </h3>
      <p className="small">
        Due {formatDateTime(breach.due_at)} · detected {formatDateTime(breach.detected_at)}
        {breach.event_id ? ` · event ${breach.event_id}` : ''}
      </p>
      {breach.deliveries.length === 0 ? (
        <p className="muted">Waiting for an sla-breach-worker to deliver the alert…</p>
      ) : (
        <TableRegion label={`Deliveries of breach ${breach.id}`}>
          <table className="responsive">
            <thead>
              <tr>
                <th scope="col">Channel</th>
                <th scope="col">Recipient</th>
                <th scope="col">Status</th>
                <th scope="col">Delivered by (replica)</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {breach.deliveries.map((d) => (
                <tr key={`${d.channel}:${d.recipient}`}>
                  <td data-label="Channel">{channelLabel(d.channel)}</td>
                  <td data-label="Recipient" className="break">
                    {d.recipient}
                  </td>
                  <td data-label="Status">
                    <DeliveryBadge status={d.status} />
                  </td>
                  <td data-label="Delivered by" className="replica">
                    {d.delivered_by ?? '—'}
                  </td>
                  <td data-label="When">{formatDateTime(d.delivered_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </article>
  );
}

function Comments({
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
  const [issues, setIssues] = useState<Issue[]>([]);
  const [busy, setBusy] = useState(false);
  // a token of no agent (the configured admin token) picks the agent it writes as
  const picksAgent = session.agent_id === null;
  const agents = usePoll(
    (signal) =>
      picksAgent
        ? api<{ items: Agent[] }>('GET', '/api/agents', undefined, { signal })
        : Promise.resolve({ items: [] as Agent[] }),
    60_000,
  );
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
      await api('POST', `/api/tickets/${ticket.id}/comments`, {
        body,
        public_reply: publicReply,
        ...(picksAgent && replyAs !== '' ? { agent_id: Number(replyAs) } : {}),
      });
      setBody('');
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
    <Section id="comments" title={`Comments (${ticket.comments.length})`}>
      <ol className="comments">
        {ticket.comments.map((c) => (
          <li key={c.id}>
            <p className="small muted">
              <strong>{c.author_name}</strong> · {formatDateTime(c.created_at)}
              {c.public_reply ? ' · public reply' : ' · internal note'}
            </p>
            <p className="comment-body">{c.body}</p>
          </li>
        ))}
      </ol>
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
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Add comment
          </button>
        </div>
      </form>
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

export function channelLabel(channel: string): string {
  return channel === 'in_app' ? 'In-app' : channel === 'email' ? 'Email' : 'Webhook';
}

function activityText(action: string, details: Record<string, unknown>): string {
  const text = label(action.replace(/^sla_clock_/, 'SLA clock '));
  const parts = Object.entries(details)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== 'object')
    .map(([k, v]) => {
      const text =
        typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) ? formatDateTime(v) : String(v);
      return `${k.replace(/_/g, ' ')}: ${text}`;
    });
  return parts.length > 0 ? `${text} (${parts.join(', ')})` : text;
}
