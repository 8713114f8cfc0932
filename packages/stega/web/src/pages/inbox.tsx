import { useState } from 'react';
import { Link } from 'react-router';
import { useAcknowledgeTicket } from '../components/escalations.js';
import { CheckField } from '../components/form-fields.js';
import { LoadState } from '../components/layout.js';
import {
  type InboxEntry,
  inboxEntries,
  unreadCount,
  useAlerts,
  useMarkRead,
} from '../data/alerts.js';
import { formatDateTime, label } from '../format.js';
import { useTitle } from '../hooks/use-title.js';
import type { Session } from '../types.js';

/** The signed-in token's in-app alerts (an admin sees everyone's), newest first, live. */
export function InboxPage({ session }: { session: Session }) {
  useTitle('Inbox');
  const page = useAlerts().data;
  const [onlyUnread, setOnlyUnread] = useState(false);
  const markRead = useMarkRead();
  const error = markRead.error ?? undefined;
  const entries = inboxEntries(page?.items ?? []).filter((e) => !onlyUnread || e.unread);
  const unread = page ? unreadCount(page) : 0;
  return (
    <div className="page">
      <div className="page-head">
        <h1>Inbox</h1>
        {unread > 0 ? (
          <button type="button" className="secondary" onClick={() => markRead.mutate(undefined)}>
            Mark all read
          </button>
        ) : null}
      </div>
      <p className="muted">
        {session.agent_id === null
          ? 'Every in-app alert: those for an agent and those for the team.'
          : 'Alerts for you and for the whole team.'}
      </p>
      <div className="list-status">
        <p role="status" aria-live="polite" aria-atomic="true">
          {page ? `${unread} unread` : ''}
        </p>
        <CheckField checked={onlyUnread} onChange={setOnlyUnread}>
          Only unread
        </CheckField>
      </div>
      {error ? (
        <p className="notice error" role="alert">
          {error.message}
        </p>
      ) : null}
      <LoadState
        loading={!page}
        error={undefined}
        empty={entries.length === 0}
        emptyText={onlyUnread ? 'Nothing unread.' : 'No alert yet.'}
      />
      {entries.length > 0 ? (
        <ul className="inbox" aria-label="Alerts">
          {entries.map((entry) => (
            <InboxItem
              key={entry.key}
              entry={entry}
              session={session}
              onRead={(ids) => markRead.mutate(ids)}
            />
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Who an alert is for, and who has read it, in words. */
function readersText(entry: InboxEntry, session: Session): string {
  const { alert, copies } = entry;
  if (copies.length > 1) {
    const readers = copies.filter((c) => c.read_at !== null);
    const names = readers.map((c) => c.agent_name ?? 'an agent').join(', ');
    return readers.length === 0
      ? `for the team’s ${copies.length} members · unread by all`
      : `for the team’s ${copies.length} members · read by ${names} (${readers.length} of ${copies.length})`;
  }
  const who =
    alert.agent_id === null
      ? 'for the team (one read state for everyone)'
      : alert.agent_id === session.agent_id
        ? 'for you'
        : `for ${alert.agent_name ?? 'an agent'}`;
  return `${who}${alert.read_at ? ` · read ${formatDateTime(alert.read_at)}` : ''}`;
}

function InboxItem({
  entry,
  session,
  onRead,
}: {
  entry: InboxEntry;
  session: Session;
  onRead: (ids: number[]) => void;
}) {
  const a = entry.alert;
  const unreadIds = entry.copies.filter((c) => c.read_at === null).map((c) => c.id);
  const acknowledge = useAcknowledgeTicket();
  const [acked, setAcked] = useState<string | undefined>();
  return (
    <li className={entry.unread ? 'inbox-item unread' : 'inbox-item'} data-alert-id={a.id}>
      <div>
        <p className="inbox-title">
          <span className={`badge alert-${a.alert_type}`}>{label(a.alert_type)}</span>{' '}
          <Link to={`/tickets/${a.ticket_id}`}>
            #{a.ticket_id} {a.ticket_subject}
          </Link>
        </p>
        <p className="small muted">
          {a.message} · {formatDateTime(a.created_at)} · {readersText(entry, session)}
        </p>
      </div>
      {/* gone once the chain stops: acknowledged here, by email, in chat or on the ticket */}
      {a.acknowledgeable ? (
        <button
          type="button"
          className="primary small"
          disabled={acknowledge.isPending}
          onClick={() =>
            acknowledge.mutate(a.ticket_id, {
              onSuccess: (result) =>
                setAcked(
                  result.items.some((r) => r.changed)
                    ? 'Acknowledged'
                    : 'Nothing left to acknowledge',
                ),
              onError: (error) => setAcked(error.message),
            })
          }
          aria-label={`Acknowledge the escalation on #${a.ticket_id}`}
        >
          Acknowledge
        </button>
      ) : null}
      {acked ? (
        <span className="small" role="status">
          {acked}
        </span>
      ) : null}
      {entry.unread ? (
        <button
          type="button"
          className="secondary small"
          onClick={() => onRead(unreadIds)}
          aria-label={`Mark read: ${label(a.alert_type)} on #${a.ticket_id}${a.agent_id === null || entry.copies.length > 1 ? ' (for the whole team)' : ''}`}
        >
          Mark read
        </button>
      ) : null}
    </li>
  );
}

/** The header's bell: the unread count, live, linking to the inbox. */
export function AlertBell({ current }: { current: boolean }) {
  const page = useAlerts().data;
  const unread = page ? unreadCount(page) : 0;
  return (
    <Link
      to="/inbox"
      className="bell"
      aria-current={current ? 'page' : undefined}
      aria-label={`Inbox, ${unread} unread`}
      data-unread={unread}
    >
      <svg aria-hidden="true" viewBox="0 0 24 24" width="20" height="20" className="bell-icon">
        <path
          d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3a1.5 1.5 0 0 0-3 0v1.16A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z"
          fill="currentColor"
        />
      </svg>
      {unread > 0 ? (
        <span className="bell-count" aria-hidden="true">
          {unread > 99 ? '99+' : unread}
        </span>
      ) : null}
    </Link>
  );
}
