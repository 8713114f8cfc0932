import { Link } from 'react-router';
import { Countdown } from '../../components/countdown.js';
import { Section } from '../../components/layout.js';
import { formatDateTime, formatDuration, formatMinutes, label } from '../../format.js';
import { useOlderPages } from '../../hooks/use-older-pages.js';
import type { Clock, TicketDetail } from '../../types.js';
import { activityText, type Names, STANDALONE_ACTIVITY } from '../../words.js';

/** Who asked, who answers, which policy, and when: the ticket's facts. */
export function DetailsSection({ ticket: t }: { ticket: TicketDetail }) {
  const firstResponse = t.clocks.find((c) => c.kind === 'first_response');
  return (
    <Section fold id="details" title="Details">
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
            <Link to={`/policies/${t.policy_id}`}>{t.policy_name ?? `Policy #${t.policy_id}`}</Link>
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
  );
}

/** Each SLA clock of the ticket with its state and due time. */
export function ClocksSection({ clocks, now }: { clocks: Clock[]; now: number }) {
  return (
    <Section fold id="clocks" title="SLA clocks">
      {clocks.length === 0 ? <p className="muted">No SLA policy applies.</p> : null}
      {clocks.map((clock) => (
        <ClockCard key={clock.kind} clock={clock} now={now} />
      ))}
    </Section>
  );
}

/** The targets the ticket missed, each once. */
export function BreachesSection({ breaches }: { breaches: TicketDetail['breaches'] }) {
  return (
    <Section fold id="breaches" title={`Breaches (${breaches.length})`}>
      {breaches.length === 0 ? (
        <p className="muted">No breach recorded.</p>
      ) : (
        <ul className="plain breaches">
          {breaches.map((breach) => (
            <li key={breach.id} className="breach" data-breach-id={breach.id}>
              <strong>{label(breach.kind)}</strong> target missed: due{' '}
              {formatDateTime(breach.due_at)}, detected {formatDateTime(breach.detected_at)}{' '}
              <span className="muted">(breach #{breach.id})</span>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

/** What happened to the ticket, in sentences, newest first. */
export function ActivitySection({
  ticket,
  names,
  now,
}: {
  ticket: TicketDetail;
  names: Names;
  now: number;
}) {
  // the ticket brings its newest entries; older ones come a page at a time
  const activity = useOlderPages({
    latest: ticket.activity,
    latestNextCursor: ticket.activity_next_cursor,
    path: `/api/tickets/${ticket.id}/activity`,
    at: (a) => a.at,
  });
  return (
    <Section fold id="activity" title="Activity">
      <ol className="activity">
        {activity.items.map((a) => (
          <li key={a.id} data-action={a.action}>
            <time dateTime={a.at}>{formatDateTime(a.at)}</time>
            {STANDALONE_ACTIVITY.has(a.action) ? (
              <span className={`activity-${a.action}`}>
                {activityText(a.action, a.details, names, now)}
              </span>
            ) : (
              <span>
                <strong>{a.actor}</strong> {activityText(a.action, a.details, names, now)}
              </span>
            )}
          </li>
        ))}
      </ol>
      {activity.hasOlder ? (
        <p>
          <button
            type="button"
            className="secondary"
            disabled={activity.loading}
            onClick={() => void activity.loadOlder()}
          >
            {activity.loading ? 'Loading…' : 'Show earlier activity'}
          </button>
        </p>
      ) : null}
      {activity.error ? <p className="notice error">{activity.error}</p> : null}
    </Section>
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

/** A running clock past its warning time and not yet due. */
export function isWarned(clock: Clock, now: number): boolean {
  return (
    clock.state === 'running' && now >= Date.parse(clock.warn_at) && now < Date.parse(clock.due_at)
  );
}

/** A clock's live countdown, warned between its warning and due times. */
export function ClockCountdown({ clock, now }: { clock: Clock; now: number }) {
  return (
    <Countdown
      name={label(clock.kind)}
      dueAt={clock.due_at}
      state={clock.state}
      pausedSince={clock.paused_since}
      stoppedAt={clock.stopped_at}
      warned={isWarned(clock, now)}
    />
  );
}

function ClockCard({ clock, now }: { clock: Clock; now: number }) {
  const pausedNow =
    clock.state === 'paused' && clock.paused_since
      ? Math.max(0, now - Date.parse(clock.paused_since))
      : 0;
  return (
    <div className={`clock clock-${clock.state}`} data-clock={clock.kind}>
      <h3>{label(clock.kind)}</h3>
      <p className="clock-countdown">
        <ClockCountdown clock={clock} now={now} />{' '}
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
        <dd data-testid={`warnings-${clock.kind}`}>
          {clock.warnings.length === 0
            ? 'no warning'
            : clock.warnings
                .map((w) =>
                  w.threshold === null
                    ? formatDateTime(w.at)
                    : `${Math.round(w.threshold * 1000) / 10} % at ${formatDateTime(w.at)}`,
                )
                .join('; ')}
        </dd>
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
