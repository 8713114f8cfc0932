import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, serverNow } from '../api.js';
import { DeliveryOutcome } from '../components/badges.js';
import { BarChart } from '../components/charts.js';
import { DataTable, Figures } from '../components/data-table.js';
import { LoadState, Section } from '../components/layout.js';
import { getQuery, keys } from '../data/queries.js';
import { formatDate, formatDateTime, formatNumber } from '../format.js';
import { useTitle } from '../hooks/use-title.js';
import type { Report, ReportDetail } from '../types.js';

type ReportDelivery = ReportDetail['deliveries'][number];

import { AchievementSection } from './achievement.js';

/** The weekly activity reports: the latest (or chosen) one with charts, and the history. */
export function ReportsPage({
  admin,
  readsReports,
  id,
}: {
  admin: boolean;
  /** Supervisors and admins: the weekly reports cover every team, agents see SLA achievement. */
  readsReports: boolean;
  id?: number;
}) {
  useTitle('Reports');
  if (!readsReports) {
    return (
      <div className="page">
        <h1>SLA achievement</h1>
        <p className="muted">
          Figures over the tickets you see. The weekly activity reports cover every team: a
          supervisor or an admin reads them.
        </p>
        <AchievementSection />
      </div>
    );
  }
  return <ActivityReports admin={admin} {...(id === undefined ? {} : { id })} />;
}

function ActivityReports({ admin, id }: { admin: boolean; id?: number }) {
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
            <ActivityChart
              id="history-chart"
              title="Tickets and SLA breaches per report period"
              summary={`Tickets created and resolved, and SLA breaches, in the last ${history.length} reports.`}
              xName="Period"
              xLabels={history.map((r) => formatDate(r.period_start))}
              figures={history.map((r) => r.data)}
            />
          ) : null}
          <DataTable<Report>
            label="All reports"
            rows={items}
            rowKey={(r) => r.id}
            rowProps={(r) => ({ 'aria-current': r.id === selectedId ? 'true' : undefined })}
            columns={[
              {
                header: 'Period',
                cell: (r) => <Link to={`/reports/${r.id}`}>{periodText(r)}</Link>,
              },
              { header: 'Created', num: true, cell: (r) => r.data.created },
              { header: 'Resolved', num: true, cell: (r) => r.data.resolved },
              { header: 'SLA breaches', num: true, cell: (r) => r.data.breached },
              {
                header: 'Median first response',
                num: true,
                cell: (r) => minutesText(r.data.median_first_response_minutes),
              },
            ]}
          />
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
      <Figures
        items={[
          ['Created', r.data.created],
          ['Resolved', r.data.resolved],
          ['SLA breaches', r.data.breached],
          ['Median first response', minutesText(r.data.median_first_response_minutes)],
          ...(r.data.sla_achievement
            ? [
                [
                  'SLA targets met',
                  r.data.sla_achievement.met_share === null
                    ? '—'
                    : `${formatNumber(r.data.sla_achievement.met_share * 100, 1)} % of ${r.data.sla_achievement.targets}`,
                ] as [string, string],
              ]
            : []),
        ]}
      />
      {people.length > 0 ? (
        <ActivityChart
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
          figures={people}
        />
      ) : (
        <p className="muted">No ticket activity in this period.</p>
      )}
      <h3>Deliveries</h3>
      {r.deliveries.length === 0 ? (
        <p className="muted">Not sent to anyone (no REPORT_EMAILS or REPORT_WEBHOOK_URL).</p>
      ) : (
        <DataTable<ReportDelivery>
          label="Report deliveries"
          rows={r.deliveries}
          rowKey={(d) => `${d.channel}:${d.recipient}`}
          columns={[
            { header: 'Channel', cell: (d) => (d.channel === 'email' ? 'Email' : 'Webhook') },
            { header: 'Recipient', className: 'break', cell: (d) => d.recipient },
            {
              header: 'Status',
              cell: (d) => <DeliveryOutcome status={d.status} lastError={d.last_error} />,
            },
            { header: 'Delivered by', className: 'replica', cell: (d) => d.delivered_by ?? '—' },
            { header: 'When', cell: (d) => formatDateTime(d.delivered_at) },
          ]}
        />
      )}
    </Section>
  );
}

/** Tickets created and resolved, and SLA breaches, per period or per assignee, as bars. */
function ActivityChart({
  figures,
  ...chart
}: {
  id: string;
  title: string;
  summary: string;
  xName: string;
  xLabels: string[];
  figures: { created: number; resolved: number; breached: number }[];
}) {
  return (
    <BarChart
      {...chart}
      yLabel="tickets / breaches"
      series={[
        { name: 'Tickets created', values: figures.map((f) => f.created) },
        { name: 'Tickets resolved', values: figures.map((f) => f.resolved) },
        { name: 'SLA breaches', values: figures.map((f) => f.breached) },
      ]}
    />
  );
}
