import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { periodProblem } from '../achievement-period.js';
import { query, serverNow } from '../api.js';
import { BarChart } from '../components/charts.js';
import { DataTable } from '../components/data-table.js';
import { LoadState, Section } from '../components/layout.js';
import { keys, pathQuery } from '../data/queries.js';
import { formatDateTime, label } from '../format.js';
import type { Achievement, MissedTarget } from '../types.js';

type Breakdown = 'metric' | 'priority' | 'team' | 'org';

interface Group {
  key: string;
  name: string;
  /** The filter that selects this group's targets. */
  filter: Record<string, string>;
  targets: number;
  met: number;
  missed: number;
  met_share: number | null;
}

const DAY = 24 * 3600_000;
const dateInput = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function groupsOf(a: Achievement, by: Breakdown): Group[] {
  switch (by) {
    case 'metric':
      return a.by_metric.map((r) => ({
        ...r,
        key: r.kind,
        name: label(r.kind),
        filter: { kind: r.kind },
      }));
    case 'priority':
      return a.by_priority.map((r) => ({
        ...r,
        key: r.priority,
        name: label(r.priority),
        filter: { priority: r.priority },
      }));
    case 'team':
      return a.by_team.map((r) => ({
        ...r,
        key: String(r.team_id),
        name: r.team_name ?? 'No team',
        filter: { team_id: r.team_id === null ? 'none' : String(r.team_id) },
      }));
    case 'org':
      return a.by_requester_org.map((r) => ({
        ...r,
        key: r.requester_org ?? '',
        name: r.requester_org ?? 'No organisation',
        filter: { requester_org: r.requester_org ?? 'none' },
      }));
  }
}

const percent = (share: number | null) =>
  share === null ? '—' : `${(share * 100).toFixed(1).replace(/\.0$/, '')} %`;

/** Share of SLA targets met over a chosen period, by a chosen breakdown; misses one click away. */
export function AchievementSection() {
  const [from, setFrom] = useState(() => dateInput(serverNow() - 7 * DAY));
  const [to, setTo] = useState(() => dateInput(serverNow() + DAY));
  const [by, setBy] = useState<Breakdown>('metric');
  const [shown, setShown] = useState<Group | 'all' | undefined>();
  const period = { start: `${from}T00:00:00Z`, end: `${to}T00:00:00Z` };
  const problem = periodProblem(from, to);
  const valid = problem === undefined;
  const achievement = useQuery({
    ...pathQuery<Achievement>(keys.achievement, `/api/sla-achievement${query(period)}`),
    enabled: valid,
    refetchInterval: 30_000,
  });
  const periodError = problem === undefined ? undefined : new Error(problem);
  // never a figure (nor its misses) for a period the server would refuse
  const a = valid ? achievement.data : undefined;
  const groups = a ? groupsOf(a, by) : [];
  return (
    <Section id="achievement" title="SLA achievement">
      <p className="muted">
        The share of SLA targets met: a target counts in the period it was decided in, when met (the
        reply or resolution in time) or at its due time when missed. Days in UTC.
      </p>
      <form className="form inline-form" onSubmit={(e) => e.preventDefault()}>
        <div className="row">
          <div className="field">
            <label htmlFor="achievement-from">From</label>
            <input
              id="achievement-from"
              type="date"
              value={from}
              onChange={(e) => setFrom(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="achievement-to">To (exclusive)</label>
            <input
              id="achievement-to"
              type="date"
              value={to}
              onChange={(e) => setTo(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="achievement-by">Per</label>
            <select
              id="achievement-by"
              value={by}
              onChange={(e) => {
                setBy(e.target.value as Breakdown);
                setShown(undefined);
              }}
            >
              <option value="metric">Metric</option>
              <option value="priority">Priority</option>
              <option value="team">Team</option>
              <option value="org">Requester organisation</option>
            </select>
          </div>
        </div>
      </form>
      <LoadState
        loading={valid && achievement.isPending}
        error={periodError ?? achievement.error ?? undefined}
        empty={!a || a.targets === 0}
        emptyText="No SLA target was decided in this period."
      />
      {a && a.targets > 0 ? (
        <>
          <dl className="figures">
            <div>
              <dt>Targets met</dt>
              <dd data-testid="achievement-met-share">{percent(a.met_share)}</dd>
            </div>
            <div>
              <dt>Targets</dt>
              <dd>{a.targets}</dd>
            </div>
            <div>
              <dt>Missed</dt>
              <dd>
                <button type="button" className="link-button" onClick={() => setShown('all')}>
                  {a.missed} missed
                </button>
              </dd>
            </div>
          </dl>
          <BarChart
            id="achievement-chart"
            title="Targets met, %"
            summary={groups
              .map((g) => `${g.name}: ${percent(g.met_share)} of ${g.targets}`)
              .join('; ')}
            xName={by === 'org' ? 'Organisation' : label(by)}
            xLabels={groups.map((g) => g.name)}
            yLabel="% met"
            series={[
              {
                name: 'Met, %',
                values: groups.map((g) => Math.round((g.met_share ?? 0) * 1000) / 10),
              },
            ]}
          />
          <DataTable<Group>
            label="SLA achievement"
            rows={groups}
            rowKey={(g) => g.key}
            rowProps={(g) => ({ 'data-group': g.key })}
            columns={[
              {
                header: by === 'org' ? 'Organisation' : label(by),
                label: 'Group',
                cell: (g) => g.name,
              },
              { header: 'Met', num: true, cell: (g) => percent(g.met_share) },
              { header: 'Targets', num: true, cell: (g) => g.targets },
              {
                header: 'Missed',
                num: true,
                cell: (g) =>
                  g.missed > 0 ? (
                    <button
                      type="button"
                      className="link-button"
                      aria-label={`${g.missed} missed: ${g.name}`}
                      onClick={() => setShown(g)}
                    >
                      {g.missed}
                    </button>
                  ) : (
                    0
                  ),
              },
            ]}
          />
          {shown && valid ? (
            <Misses
              period={period}
              filter={shown === 'all' ? {} : shown.filter}
              title={shown === 'all' ? 'All missed targets' : `Missed: ${shown.name}`}
            />
          ) : null}
        </>
      ) : null}
    </Section>
  );
}

function Misses({
  period,
  filter,
  title,
}: {
  period: { start: string; end: string };
  filter: Record<string, string>;
  title: string;
}) {
  const params = { ...period, ...filter };
  const misses = useQuery({
    ...pathQuery<{ items: MissedTarget[] }>(
      keys.achievement,
      `/api/sla-achievement/misses${query(params)}`,
    ),
    refetchInterval: 30_000,
  });
  const items = misses.data?.items ?? [];
  return (
    <div className="misses" aria-label={title} role="region">
      <h3>{title}</h3>
      <LoadState
        loading={misses.isPending}
        error={misses.error}
        empty={items.length === 0}
        emptyText="None."
      />
      {items.length > 0 ? (
        <DataTable<MissedTarget>
          label={title}
          rows={items}
          rowKey={(m) => `${m.ticket_id}:${m.kind}:${m.due_at}`}
          rowProps={(m) => ({ 'data-missed-ticket': m.ticket_id })}
          columns={[
            {
              header: 'Ticket',
              cell: (m) => (
                <Link to={`/tickets/${m.ticket_id}`}>
                  #{m.ticket_id} {m.subject}
                </Link>
              ),
            },
            { header: 'Metric', cell: (m) => label(m.kind) },
            { header: 'Due', cell: (m) => formatDateTime(m.due_at) },
            {
              header: 'Met late',
              cell: (m) => (m.stopped_at ? formatDateTime(m.stopped_at) : 'not yet'),
            },
            { header: 'Breach', cell: (m) => (m.breach_id === null ? '—' : `#${m.breach_id}`) },
          ]}
        />
      ) : null}
    </div>
  );
}
