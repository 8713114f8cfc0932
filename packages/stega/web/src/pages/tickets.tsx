import { useQuery } from '@tanstack/react-query';
import { type ChangeEvent, useEffect, useMemo, useState } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { query } from '../api.js';
import { PriorityBadge, SlaBadge, StatusBadge } from '../components/badges.js';
import { Countdown } from '../components/countdown.js';
import { type Column, DataTable } from '../components/data-table.js';
import { Freshness, LoadState } from '../components/layout.js';
import { useLiveConnected } from '../data/live.js';
import { agentsQuery, ticketListQuery } from '../data/queries.js';
import { formatNumber, formatWhen, label } from '../format.js';
import { useNow } from '../hooks/use-now.js';
import { useTitle } from '../hooks/use-title.js';
import {
  PRIORITIES,
  type Session,
  STATUSES,
  type TicketListItem,
  type TicketStatus,
} from '../types.js';

const PAGE = 50;

type View = 'open' | 'mine' | 'unassigned' | 'all';
type Sort = 'deadline' | 'priority' | 'age' | 'newest';

const ACTIVE: readonly TicketStatus[] = ['open', 'in_progress'];
const SORTS: { value: Sort; label: string }[] = [
  { value: 'deadline', label: 'Next SLA deadline' },
  { value: 'priority', label: 'Priority' },
  { value: 'age', label: 'Oldest first' },
  { value: 'newest', label: 'Newest first' },
];

/**
 * Tickets with live SLA countdowns. Views (open work, mine, unassigned, all), sort, search and
 * filters live in the address (shareable, back-able); pages follow the API's cursor, and the
 * live refresh revalidates with the last ETag, so an unchanged list costs a 304.
 */
export function TicketsPage({ session }: { session: Session }) {
  useTitle('Tickets');
  const path = useLocation().pathname;
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const mine = session.agent_id !== null;
  const rawView = search.get('view') as View | null;
  const view: View =
    rawView &&
    ['open', 'mine', 'unassigned', 'all'].includes(rawView) &&
    (rawView !== 'mine' || mine)
      ? rawView
      : 'open';
  const status = listParam(search.get('status'));
  const priority = listParam(search.get('priority'));
  const assignee = search.get('assignee') ?? '';
  const sla = search.get('sla') ?? '';
  const q = search.get('q') ?? '';
  const cursor = search.get('cursor') ?? '';
  const sortParam = search.get('sort') as Sort | null;
  const sort: Sort =
    sortParam && SORTS.some((s) => s.value === sortParam)
      ? sortParam
      : view === 'all'
        ? 'newest'
        : 'deadline';
  const viewStatus = view === 'all' || status.length > 0 ? status : [...ACTIVE];
  const viewAssignee =
    view === 'mine' ? 'me' : view === 'unassigned' ? 'none' : assignee || undefined;

  const apiQuery = query({
    status: viewStatus.join(',') || undefined,
    priority: priority.join(',') || undefined,
    assignee_id: viewAssignee,
    breached: sla === 'breached' ? true : undefined,
    at_risk: sla === 'at_risk' ? true : undefined,
    q: q.trim() || undefined,
    sort,
    cursor: cursor || undefined,
    limit: PAGE,
  });
  // live (data/live.ts): a new or changed ticket refreshes the list at once; the poll stays
  // for SLA states that change with time alone
  const live = useLiveConnected();
  const tickets = useQuery({
    ...ticketListQuery(apiQuery),
    refetchInterval: live ? 15_000 : 5000,
  });
  const agents = useQuery({ ...agentsQuery(), refetchInterval: 60_000 });

  const setParams = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    if (!('cursor' in changes)) next.delete('cursor');
    const qs = next.toString();
    navigate(`${path}${qs ? `?${qs}` : ''}`, { replace: !('cursor' in changes) });
  };
  const toggle = (key: 'status' | 'priority', current: string[], value: string) => {
    const set = new Set(current);
    if (set.has(value)) set.delete(value);
    else set.add(value);
    setParams({ [key]: [...set].join(',') });
  };
  const filtered = status.length + priority.length > 0 || assignee !== '' || sla !== '' || q !== '';

  const page = tickets.data;
  const items = page?.items ?? [];
  const summary = useMemo(() => {
    if (!page) return '';
    if (page.total === 0) return 'No tickets match.';
    const total = page.total_exact ? formatNumber(page.total) : `about ${formatNumber(page.total)}`;
    return `Showing ${formatNumber(page.items.length)} of ${total} tickets${cursor ? ' (a later page)' : ''}.`;
  }, [page, cursor]);
  const views: { value: View; label: string }[] = [
    { value: 'open', label: 'Open work' },
    ...(mine ? [{ value: 'mine' as View, label: 'My tickets' }] : []),
    { value: 'unassigned', label: 'Unassigned' },
    { value: 'all', label: 'All tickets' },
  ];

  return (
    <div className="page">
      <div className="page-head">
        <h1>Tickets</h1>
        <Link to="/tickets/new" className="button primary">
          New ticket
        </Link>
      </div>

      <nav className="views" aria-label="Views">
        <ul>
          {views.map((v) => (
            <li key={v.value}>
              <Link
                to={`/tickets${v.value === 'open' ? '' : `?view=${v.value}`}`}
                aria-current={view === v.value ? 'page' : undefined}
              >
                {v.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>

      <SearchForm q={q} onSearch={(text) => setParams({ q: text || undefined })} />

      <form className="filters" aria-label="Ticket filters" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="ticket-sort">Sort by</label>
          <select
            id="ticket-sort"
            value={sort}
            onChange={(e: ChangeEvent<HTMLSelectElement>) => setParams({ sort: e.target.value })}
          >
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </div>
        {view === 'all' ? (
          <CheckFilter
            legend="Status"
            name="status"
            options={STATUSES}
            checked={status}
            onToggle={(s) => toggle('status', status, s)}
          />
        ) : null}
        <CheckFilter
          legend="Priority"
          name="priority"
          options={PRIORITIES}
          checked={priority}
          onToggle={(p) => toggle('priority', priority, p)}
        />
        {view === 'open' || view === 'all' ? (
          <div className="field">
            <label htmlFor="filter-assignee">Assignee</label>
            <select
              id="filter-assignee"
              value={assignee}
              onChange={(e: ChangeEvent<HTMLSelectElement>) =>
                setParams({ assignee: e.target.value })
              }
            >
              <option value="">Anyone</option>
              <option value="none">Unassigned</option>
              {(agents.data?.items ?? []).map((agent) => (
                <option key={agent.id} value={String(agent.id)}>
                  {agent.name}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        <div className="field">
          <label htmlFor="filter-sla">SLA</label>
          <select
            id="filter-sla"
            value={sla}
            onChange={(e: ChangeEvent<HTMLSelectElement>) => setParams({ sla: e.target.value })}
          >
            <option value="">Any</option>
            <option value="breached">Breached</option>
            <option value="at_risk">At risk (warned, not yet due)</option>
          </select>
        </div>
        {filtered ? (
          <button
            type="button"
            className="secondary"
            onClick={() =>
              navigate(view === 'open' ? path : `${path}?view=${view}`, { replace: true })
            }
          >
            Clear filters
          </button>
        ) : null}
      </form>

      <div className="list-status">
        <p role="status" aria-live="polite" aria-atomic="true">
          {summary}
        </p>
        <Freshness updatedAt={tickets.dataUpdatedAt} />
      </div>
      <LoadState loading={tickets.isPending} error={tickets.error} empty={!page} />

      {items.length > 0 ? (
        <DataTable<TicketListItem>
          label="Tickets"
          className="tickets"
          caption={
            <caption className="visually-hidden">
              Tickets, {SORTS.find((s) => s.value === sort)?.label.toLowerCase()}, with their SLA
              countdowns
            </caption>
          }
          rows={items}
          rowKey={(t) => t.id}
          rowProps={(t) => ({ 'data-ticket-id': t.id })}
          columns={COLUMNS}
        />
      ) : null}

      {cursor || page?.next_cursor ? (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="secondary"
            disabled={!cursor}
            onClick={() => setParams({ cursor: undefined })}
          >
            First page
          </button>
          <button
            type="button"
            className="secondary"
            disabled={!page?.next_cursor}
            onClick={() => setParams({ cursor: page?.next_cursor ?? undefined })}
          >
            Next page
          </button>
        </nav>
      ) : null}
    </div>
  );
}

/**
 * The list's columns: the ticket, its state, and a live countdown per SLA clock (next reply
 * only while a requester's reply waits for an answer, or once it was answered).
 */
const COLUMNS: Column<TicketListItem>[] = [
  { header: '#', num: true, cell: (t) => t.id },
  {
    header: 'Subject',
    className: 'subject',
    cell: (t) => (
      <div>
        <Link to={`/tickets/${t.id}`}>{t.subject}</Link>
        <span className="muted small">
          {t.requester_name}
          {t.requester_org ? ` · ${t.requester_org}` : ''}
        </span>
      </div>
    ),
  },
  { header: 'Priority', cell: (t) => <PriorityBadge priority={t.priority} /> },
  { header: 'Status', cell: (t) => <StatusBadge status={t.status} /> },
  { header: 'Assignee', cell: (t) => t.assignee_name ?? <span className="muted">—</span> },
  {
    header: 'First response',
    cell: (t) => (
      <Countdown
        name="First response"
        dueAt={t.first_response_due_at}
        state={t.first_response_state}
        stoppedAt={t.first_response_stopped_at}
      />
    ),
  },
  {
    header: 'Resolution',
    cell: (t) => (
      <Countdown
        name="Resolution"
        dueAt={t.resolution_due_at}
        state={t.resolution_state}
        stoppedAt={t.resolution_stopped_at}
      />
    ),
  },
  {
    header: 'Next reply',
    cell: (t) =>
      t.next_reply_state === null ? (
        <span className="muted">—</span>
      ) : (
        <NextReply
          dueAt={t.next_reply_due_at}
          state={t.next_reply_state}
          stoppedAt={t.next_reply_stopped_at}
        />
      ),
  },
  { header: 'SLA', cell: (t) => <SlaBadge breached={t.breached} warned={t.at_risk} /> },
];

/**
 * The reply the ticket waits for from an agent: its countdown (overdue once breached) and,
 * while it runs, the time it is due in the reader's zone.
 */
function NextReply({
  dueAt,
  state,
  stoppedAt,
}: {
  dueAt: string | null;
  state: TicketListItem['next_reply_state'];
  stoppedAt: string | null;
}) {
  const now = useNow();
  return (
    <>
      <Countdown name="Next reply" dueAt={dueAt} state={state} stoppedAt={stoppedAt} />
      {dueAt && state === 'running' ? (
        <span className="small muted next-reply-due"> · due {formatWhen(dueAt, now)}</span>
      ) : null}
    </>
  );
}

/** The full-text search box: the words in the address, searched on submit. */
function SearchForm({ q, onSearch }: { q: string; onSearch: (text: string) => void }) {
  const [searchText, setSearchText] = useState(q);
  useEffect(() => setSearchText(q), [q]);
  return (
    <form
      className="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(searchText.trim());
      }}
    >
      <label htmlFor="ticket-search">Search tickets</label>
      <input
        id="ticket-search"
        type="search"
        value={searchText}
        placeholder="Words in the subject, requester or comments"
        onChange={(e) => setSearchText(e.target.value)}
      />
      <button type="submit" className="secondary">
        Search
      </button>
    </form>
  );
}

/** A filter that takes any of `options`: one checkbox each, under a legend. */
function CheckFilter({
  legend,
  name,
  options,
  checked,
  onToggle,
}: {
  legend: string;
  name: string;
  options: readonly string[];
  checked: string[];
  onToggle: (value: string) => void;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="checks">
        {options.map((value) => (
          <label key={value} className="check">
            <input
              type="checkbox"
              name={name}
              value={value}
              checked={checked.includes(value)}
              onChange={() => onToggle(value)}
            />
            {label(value)}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

function listParam(value: string | null): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
