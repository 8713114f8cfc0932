import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, serverNow } from '../api.js';
import { DeliveryOutcome } from '../components/badges.js';
import { BarChart } from '../components/charts.js';
import { LoadState, Section, TableRegion } from '../components/layout.js';
import { getQuery, keys } from '../data/queries.js';
import { formatDate, formatDateTime, formatNumber } from '../format.js';
import { useTitle } from '../hooks/use-title.js';
import type { Report, ReportDetail } from '../types.js';
import { AchievementSection } from './achievement.js';

/** The weekly activity reports: the latest (or chosen) one with charts, and the history. */
export function ReportsPage({ admin, id }: { admin: boolean; id?: number }) {
  useTitle('Reports');
  // after "Generate", poll every second until the new report shows up (at most a minute)
  const [waitingSince, setWaitingSince] = useState<number | undefined>();
  const reports = useQuery({
    ...getQuery<{ items: Report[] }>([...keys.reports, 'list'], '/api/reports?limit=26'),
    refetchInterval: waitingSince !== undefined ? 1000 : 10_000,
  });
  const items = reports.data?.items ?? [];
  const selectedId = id ?? items[0]?.id;
  const [status, setStatus] = useState<{ text: string; error?: boolean } | undefined>();
  const newest = items.reduce((max, r) => Math.max(max, Date.parse(r.generated_at)), 0);
  useEffect(() => {
    if (waitingSince === undefined) return;
    if (newest >= waitingSince || serverNow() - waitingSince > 60_000) setWaitingSince(undefined);
  }, [newest, waitingSince]);

  const generate = async () => {
    setStatus(undefined);
    try {
      setWaitingSince(serverNow() - 1000);
      const job = await api<{ job_id: number }>('POST', '/api/reports', {});
      setStatus({
        text: `Report job ${job.job_id} queued for the past week; the report appears here when it is ready.`,
      });
    } catch (error) {
      setWaitingSince(undefined);
      setStatus({ text: (error as Error).message, error: true });
    }
  };

  const history = [...items].reverse();
  return (
    <div className="page">
      <div className="page-head">
        <h1>Activity reports</h1>
        {admin ? (
          <button type="button" className="secondary" onClick={generate}>
            Generate for the past week
          </button>
        ) : null}
      </div>
      <p role="status" className={status?.error ? 'notice error' : 'notice ok'} hidden={!status}>
        {status?.text}
      </p>
      <p className="muted">
        A report is generated every Monday at 08:00 (STEGA_TIME_ZONE) for the week before, and sent
        to the report recipients.
      </p>
      <LoadState
        loading={reports.isPending}
        error={reports.error}
        empty={items.length === 0}
        emptyText="No report yet."
      />
      <AchievementSection />
      {selectedId !== undefined ? <ReportDetailView id={selectedId} /> : null}
      {items.length > 0 ? (
        <Section id="history" title="All reports">
          {history.length > 1 ? (
            <BarChart
              id="history-chart"
              title="Tickets and SLA breaches per report period"
              summary={`Tickets created and resolved, and SLA breaches, in the last ${history.length} reports.`}
              xName="Period"
              xLabels={history.map((r) => formatDate(r.period_start))}
              yLabel="tickets / breaches"
              series={[
                { name: 'Tickets created', values: history.map((r) => r.data.created) },
                { name: 'Tickets resolved', values: history.map((r) => r.data.resolved) },
                { name: 'SLA breaches', values: history.map((r) => r.data.breached) },
              ]}
            />
          ) : null}
          <TableRegion label="All reports">
            <table className="responsive">
              <thead>
                <tr>
                  <th scope="col">Period</th>
                  <th scope="col">Created</th>
                  <th scope="col">Resolved</th>
                  <th scope="col">SLA breaches</th>
                  <th scope="col">Median first response</th>
                </tr>
              </thead>
              <tbody>
                {items.map((r) => (
                  <tr key={r.id} aria-current={r.id === selectedId ? 'true' : undefined}>
                    <td data-label="Period">
                      <Link to={`/reports/${r.id}`}>{periodText(r)}</Link>
                    </td>
                    <td data-label="Created" className="num">
                      {r.data.created}
                    </td>
                    <td data-label="Resolved" className="num">
                      {r.data.resolved}
                    </td>
                    <td data-label="SLA breaches" className="num">
                      {r.data.breached}
                    </td>
                    <td data-label="Median first response" className="num">
                      {minutesText(r.data.median_first_response_minutes)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        </Section>
      ) : null}
    </div>
  );
}

function periodText(r: Report): string {
  // period_end is exclusive: show the last day of the period
  return `${formatDate(r.period_start)} – ${formatDate(new Date(Date.parse(r.period_end) - 1).toISOString())}`;
}

function minutesText(minutes: number | null): string {
  return minutes === null ? '—' : `${formatNumber(minutes, 1)} min`;
}

function ReportDetailView({ id }: { id: number }) {
  const report = useQuery({
    ...getQuery<ReportDetail>([...keys.reports, id], `/api/reports/${id}`),
    refetchInterval: 10_000,
  });
  const r = report.data;
  if (!r) return <LoadState loading={report.isPending} error={report.error} empty />;
  const people = r.data.per_assignee;
  return (
    <Section id="report" title={`Report for ${periodText(r)}`}>
      <p className="muted small">
        Generated {formatDateTime(r.generated_at)} · time zone {r.time_zone}
      </p>
      <dl className="figures">
        <div>
          <dt>Created</dt>
          <dd>{r.data.created}</dd>
        </div>
        <div>
          <dt>Resolved</dt>
          <dd>{r.data.resolved}</dd>
        </div>
        <div>
          <dt>SLA breaches</dt>
          <dd>{r.data.breached}</dd>
        </div>
        <div>
          <dt>Median first response</dt>
          <dd>{minutesText(r.data.median_first_response_minutes)}</dd>
        </div>
        {r.data.sla_achievement ? (
          <div>
            <dt>SLA targets met</dt>
            <dd>
              {r.data.sla_achievement.met_share === null
                ? '—'
                : `${formatNumber(r.data.sla_achievement.met_share * 100, 1)} % of ${r.data.sla_achievement.targets}`}
            </dd>
          </div>
        ) : null}
      </dl>
      {people.length > 0 ? (
        <BarChart
          id="assignee-chart"
          title="Per assignee"
          summary={people
            .map(
              (p) =>
                `${p.assignee_name ?? 'Unassigned'}: ${p.created} tickets created, ${p.resolved} resolved, ${p.breached} SLA breaches`,
            )
            .join('; ')}
          xName="Assignee"
          xLabels={people.map((p) => p.assignee_name ?? 'Unassigned')}
          yLabel="tickets / breaches"
          series={[
            { name: 'Tickets created', values: people.map((p) => p.created) },
            { name: 'Tickets resolved', values: people.map((p) => p.resolved) },
            { name: 'SLA breaches', values: people.map((p) => p.breached) },
          ]}
        />
      ) : (
        <p className="muted">No ticket activity in this period.</p>
      )}
      <h3>Deliveries</h3>
      {r.deliveries.length === 0 ? (
        <p className="muted">Not sent to anyone (no REPORT_EMAILS or REPORT_WEBHOOK_URL).</p>
      ) : (
        <TableRegion label="Report deliveries">
          <table className="responsive">
            <thead>
              <tr>
                <th scope="col">Channel</th>
                <th scope="col">Recipient</th>
                <th scope="col">Status</th>
                <th scope="col">Delivered by</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {r.deliveries.map((d) => (
                <tr key={`${d.channel}:${d.recipient}`}>
                  <td data-label="Channel">{d.channel === 'email' ? 'Email' : 'Webhook'}</td>
                  <td data-label="Recipient" className="break">
                    {d.recipient}
                  </td>
                  <td data-label="Status">
                    <DeliveryOutcome status={d.status} lastError={d.last_error} />
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
    </Section>
  );
}
