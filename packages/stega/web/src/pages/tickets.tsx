import { type ChangeEvent, useMemo } from 'react';
import { api, query } from '../api.js';
import { PriorityBadge, SlaBadge, StatusBadge } from '../components/badges.js';
import { Countdown } from '../components/countdown.js';
import { Freshness, LoadState, TableRegion } from '../components/layout.js';
import { label } from '../format.js';
import { usePoll, useTitle } from '../hooks.js';
import { Link, navigate, useLocation } from '../router.js';
import { type Agent, PRIORITIES, STATUSES, type TicketPage } from '../types.js';

const PAGE = 50;

/** Tickets with live SLA countdowns; the filters live in the address (shareable, back-able). */
export function TicketsPage() {
  useTitle('Tickets');
  const { search, path } = useLocation();
  const status = listParam(search.get('status'));
  const priority = listParam(search.get('priority'));
  const assignee = search.get('assignee') ?? '';
  const sla = search.get('sla') ?? '';
  const offset = Math.max(0, Number(search.get('offset') ?? 0) || 0);

  const apiQuery = query({
    status: status.join(',') || undefined,
    priority: priority.join(',') || undefined,
    assignee_id: assignee || undefined,
    breached: sla === 'breached' ? true : undefined,
    at_risk: sla === 'at_risk' ? true : undefined,
    limit: PAGE,
    offset,
  });
  const tickets = usePoll(
    (signal) => api<TicketPage>('GET', `/api/tickets${apiQuery}`, undefined, { signal }),
    5000,
    apiQuery,
  );
  const agents = usePoll(
    (signal) => api<{ items: Agent[] }>('GET', '/api/agents', undefined, { signal }),
    60_000,
  );

  const setParams = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    if (!('offset' in changes)) next.delete('offset');
    const qs = next.toString();
    navigate(`${path}${qs ? `?${qs}` : ''}`, { replace: !('offset' in changes) });
  };
  const toggle = (key: 'status' | 'priority', current: string[], value: string) => {
    const set = new Set(current);
    if (set.has(value)) set.delete(value);
    else set.add(value);
    setParams({ [key]: [...set].join(',') });
  };
  const filtered = status.length + priority.length > 0 || assignee !== '' || sla !== '';

  const page = tickets.data;
  const items = page?.items ?? [];
  const summary = useMemo(() => {
    if (!page) return '';
    if (page.total === 0) return 'No tickets match.';
    const last = Math.min(page.offset + page.items.length, page.total);
    return `Showing ${page.offset + 1}–${last} of ${page.total} tickets.`;
  }, [page]);

  return (
    <div className="page">
      <div className="page-head">
        <h1>Tickets</h1>
        <Link to="/tickets/new" className="button primary">
          New ticket
        </Link>
      </div>

      <form className="filters" aria-label="Ticket filters" onSubmit={(e) => e.preventDefault()}>
        <CheckFilter
          legend="Status"
          name="status"
          options={STATUSES}
          checked={status}
          onToggle={(s) => toggle('status', status, s)}
        />
        <CheckFilter
          legend="Priority"
          name="priority"
          options={PRIORITIES}
          checked={priority}
          onToggle={(p) => toggle('priority', priority, p)}
        />
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
            onClick={() => navigate(path, { replace: true })}
          >
            Clear filters
          </button>
        ) : null}
      </form>

      <div className="list-status">
        <p role="status" aria-live="polite" aria-atomic="true">
          {summary}
        </p>
        <Freshness updatedAt={tickets.updatedAt} />
      </div>
      <LoadState loading={tickets.loading} error={tickets.error} empty={!page} />

      {items.length > 0 ? (
        <TableRegion label="Tickets">
          <table className="tickets responsive">
            <caption className="visually-hidden">
              Tickets, newest first, with their SLA countdowns
            </caption>
            <thead>
              <tr>
                <th scope="col" className="num">
                  #
                </th>
                <th scope="col">Subject</th>
                <th scope="col">Priority</th>
                <th scope="col">Status</th>
                <th scope="col">Assignee</th>
                <th scope="col">First response</th>
                <th scope="col">Resolution</th>
                <th scope="col">SLA</th>
              </tr>
            </thead>
            <tbody>
              {items.map((t) => (
                <tr key={t.id} data-ticket-id={t.id}>
                  <td data-label="#" className="num">
                    {t.id}
                  </td>
                  <td data-label="Subject" className="subject">
                    <div>
                      <Link to={`/tickets/${t.id}`}>{t.subject}</Link>
                      <span className="muted small">
                        {t.requester_name}
                        {t.requester_org ? ` · ${t.requester_org}` : ''}
                      </span>
                    </div>
                  </td>
                  <td data-label="Priority">
                    <PriorityBadge priority={t.priority} />
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={t.status} />
                  </td>
                  <td data-label="Assignee">
                    {t.assignee_name ?? <span className="muted">—</span>}
                  </td>
                  <td data-label="First response">
                    <Countdown
                      name="First response"
                      dueAt={t.first_response_due_at}
                      state={t.first_response_state}
                    />
                  </td>
                  <td data-label="Resolution">
                    <Countdown
                      name="Resolution"
                      dueAt={t.resolution_due_at}
                      state={t.resolution_state}
                    />
                  </td>
                  <td data-label="SLA">
                    <SlaBadge breached={t.breached} warned={t.at_risk} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      ) : null}

      {page && page.total > PAGE ? (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="secondary"
            disabled={offset === 0}
            onClick={() => setParams({ offset: String(Math.max(0, offset - PAGE)) })}
          >
            Newer
          </button>
          <button
            type="button"
            className="secondary"
            disabled={offset + PAGE >= page.total}
            onClick={() => setParams({ offset: String(offset + PAGE) })}
          >
            Older
          </button>
        </nav>
      ) : null}
    </div>
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
