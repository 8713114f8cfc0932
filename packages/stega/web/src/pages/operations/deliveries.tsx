import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { query } from '../../api.js';
import { DeliveryProgress } from '../../components/badges.js';
import { LineChart } from '../../components/charts.js';
import { DataTable, Figures } from '../../components/data-table.js';
import { LoadState, Section } from '../../components/layout.js';
import { keys, pathQuery } from '../../data/queries.js';
import {
  formatAgo,
  formatDateTime,
  formatDuration,
  formatNumber,
  formatTime,
  label,
} from '../../format.js';
import type { DeliverySeries, OutstandingDeliveries } from '../../types.js';
import { channelLabel } from '../ticket/alerts.js';

type Endpoint = OutstandingDeliveries['endpoints'][number];
type Outstanding = OutstandingDeliveries['items'][number];

const RANGES = [
  { value: '15', label: 'Last 15 minutes', minutes: 15, bucket: 30 },
  { value: '60', label: 'Last hour', minutes: 60, bucket: 60 },
  { value: '360', label: 'Last 6 hours', minutes: 360, bucket: 600 },
  { value: '1440', label: 'Last 24 hours', minutes: 1440, bucket: 1800 },
];

/** Alerts not delivered yet, each channel with its state, and the endpoints that are failing. */
export function OutstandingSection() {
  const outstanding = useQuery({
    ...pathQuery<OutstandingDeliveries>(keys.operations, '/api/deliveries/outstanding?limit=100'),
    refetchInterval: 3000,
  });
  const data = outstanding.data;
  return (
    <Section id="outstanding-deliveries" title="Undelivered alerts">
      <LoadState loading={outstanding.isPending} error={outstanding.error} empty={!data} />
      {data && data.endpoints.length > 0 ? (
        <DataTable<Endpoint>
          label="Failing endpoints"
          caption={
            <caption className="visually-hidden">
              Endpoints whose circuit is open or failing
            </caption>
          }
          rows={data.endpoints}
          rowKey={(e) => e.endpoint}
          rowProps={(e) => ({ 'data-endpoint': e.endpoint, 'data-circuit': e.state })}
          columns={[
            { header: 'Endpoint', className: 'break', cell: (e) => e.endpoint },
            {
              header: 'Circuit',
              cell: (e) => (
                <>
                  <span className={`badge delivery-${e.state === 'open' ? 'failed' : 'pending'}`}>
                    {e.state === 'open' ? 'Open' : 'Closed'}
                  </span>
                  {e.opened_at ? (
                    <span className="small"> since {formatDateTime(e.opened_at)}</span>
                  ) : null}
                </>
              ),
            },
            { header: 'Failures in a row', num: true, cell: (e) => e.consecutive_failures },
            { header: 'Next probe', cell: (e) => formatDateTime(e.probe_at) },
            { header: 'Last error', className: 'break small', cell: (e) => e.last_error ?? '—' },
          ]}
        />
      ) : null}
      {data && data.items.length === 0 ? <p className="muted">Every alert is delivered.</p> : null}
      {data && data.items.length > 0 ? (
        <DataTable<Outstanding>
          label="Undelivered alerts"
          caption={
            <caption className="visually-hidden">
              Alert deliveries not delivered yet, newest first, with their state
            </caption>
          }
          rows={data.items}
          rowKey={(d) => d.id}
          rowProps={(d) => ({ 'data-delivery-id': d.id, 'data-state': d.state })}
          columns={[
            { header: 'Alert', cell: (d) => `${label(d.alert_type)} ${d.alert_id}` },
            {
              header: 'Ticket',
              cell: (d) => <Link to={`/tickets/${d.ticket_id}`}>#{d.ticket_id}</Link>,
            },
            { header: 'Channel', cell: (d) => channelLabel(d.channel) },
            { header: 'Recipient', className: 'break', cell: (d) => d.recipient },
            { header: 'State', cell: (d) => <DeliveryProgress d={d} /> },
            { header: 'Attempts', num: true, cell: (d) => d.attempts },
          ]}
        />
      ) : null}
    </Section>
  );
}

/** Deliveries per sla-breach-worker replica over a chosen period, with their timeliness. */
export function DeliveryChart() {
  const [range, setRange] = useState('60');
  const r = RANGES.find((x) => x.value === range) ?? (RANGES[1] as (typeof RANGES)[number]);
  const q = query({ minutes: r.minutes, bucket_seconds: r.bucket });
  const series = useQuery({
    ...pathQuery<DeliverySeries>(keys.operations, `/api/deliveries/per-replica${q}`),
    refetchInterval: 5000,
  });
  const data = series.data;
  const total = data?.replicas.reduce((a, s) => a + s.total, 0) ?? 0;
  return (
    <Section
      id="deliveries-per-replica"
      title="Alert deliveries per replica"
      actions={
        <div className="field inline">
          <label htmlFor="delivery-range">Period</label>
          <select id="delivery-range" value={range} onChange={(e) => setRange(e.target.value)}>
            {RANGES.map((x) => (
              <option key={x.value} value={x.value}>
                {x.label}
              </option>
            ))}
          </select>
        </div>
      }
    >
      <LoadState loading={series.isPending} error={series.error} empty={!data} />
      {data ? <DeliveryTimeliness series={data} /> : null}
      {data ? (
        <LineChart
          id="delivery-chart"
          title={`Deliveries per sla-breach-worker replica, ${r.label.toLowerCase()}, per ${formatDuration(
            data.bucket_seconds * 1000,
          )}`}
          summary={
            data.replicas.length === 0
              ? 'No alert was delivered in this period.'
              : `${total} deliveries: ${data.replicas
                  .map((s) => `${s.delivered_by} ${s.total}`)
                  .join(', ')}.`
          }
          xName="Time"
          xLabels={data.buckets.map((b) => formatTime(Date.parse(b)))}
          yLabel="deliveries"
          series={data.replicas.map((s) => ({
            name: s.delivered_by,
            values: s.counts,
            total: s.total,
          }))}
        />
      ) : null}
    </Section>
  );
}

/** Seconds with sub-second precision below a minute (lateness is about seconds). */
function formatSeconds(seconds: number | null): string {
  if (seconds === null) return '—';
  return seconds < 60
    ? `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`
    : formatDuration(seconds * 1000);
}

/** Lateness of the last hour's deliveries and the alert waiting longest, from the ledger. */
function DeliveryTimeliness({ series }: { series: DeliverySeries }) {
  const { lateness, undelivered } = series;
  const oldest = undelivered.oldest;
  return (
    <Figures
      label="Alert timeliness"
      items={[
        ['Lateness p50, last hour', formatSeconds(lateness.p50_seconds)],
        ['Lateness p99, last hour', formatSeconds(lateness.p99_seconds)],
        ['Deliveries, last hour', formatNumber(lateness.deliveries)],
        ['Undelivered alerts', formatNumber(undelivered.count)],
        [
          'Oldest undelivered',
          oldest ? (
            <>
              <Link to={`/tickets/${oldest.ticket_id}`}>
                {oldest.alert_type} #{oldest.alert_id}, ticket #{oldest.ticket_id}
              </Link>{' '}
              <span className="muted small">due {formatAgo(oldest.age_seconds)}</span>
            </>
          ) : (
            'none'
          ),
        ],
      ]}
    />
  );
}
