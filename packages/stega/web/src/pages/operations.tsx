import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, query } from '../api.js';
import { DeliveryProgress } from '../components/badges.js';
import { LineChart } from '../components/charts.js';
import { Freshness, LoadState, Section, TableRegion } from '../components/layout.js';
import { keys, pathQuery } from '../data/queries.js';
import {
  formatAgo,
  formatDateTime,
  formatDuration,
  formatNumber,
  formatTime,
  label,
} from '../format.js';
import { useTitle } from '../hooks/use-title.js';
import type {
  Consumer,
  DeadLetter,
  DeliverySeries,
  JobOverview,
  OutstandingDeliveries,
  Queue,
  Takeovers,
} from '../types.js';

/** The pipeline, live: queues, consumers and replicas, takeovers, deliveries, dead letters, jobs. */
export function OperationsPage() {
  useTitle('Operations');
  const queues = useQuery({
    ...pathQuery<{ items: Queue[] }>(keys.operations, '/api/queues'),
    refetchInterval: 2000,
  });
  const items = queues.data?.items ?? [];
  const groups = items.flatMap((q) =>
    q.consumers
      .filter((c) => c.subconsumers.length > 0)
      .map((c) => ({ queue: q.queue_name, consumer: c.name })),
  );
  return (
    <div className="page">
      <div className="page-head">
        <h1>Operations</h1>
        <Freshness updatedAt={queues.dataUpdatedAt} />
      </div>
      <LoadState loading={queues.isPending} error={queues.error} empty={!queues.data} />
      {items.map((queue) => (
        <QueueSection key={queue.queue_name} queue={queue} />
      ))}
      {groups.map((g) => (
        <TakeoverSection key={`${g.queue}/${g.consumer}`} queue={g.queue} consumer={g.consumer} />
      ))}
      <DeliveryChart />
      <OutstandingSection />
      {items.map((queue) => (
        <DeadLetterSection key={queue.queue_name} queue={queue.queue_name} />
      ))}
      <JobSection />
    </div>
  );
}

function QueueSection({ queue }: { queue: Queue }) {
  const id = `queue-${queue.queue_name.replace(/\W+/g, '-')}`;
  const lags = queue.consumers.map((c) => c.lag_seconds).filter((l): l is number => l !== null);
  const maxLag = lags.length > 0 ? Math.max(...lags) : null;
  return (
    <Section id={id} title={`Queue ${queue.queue_name}`}>
      <dl className="figures">
        <div>
          <dt>Depth</dt>
          <dd>{formatNumber(depthOf(queue))}</dd>
        </div>
        <div>
          <dt>Slowest consumer lag</dt>
          <dd>{maxLag === null ? '—' : formatDuration(maxLag * 1000)}</dd>
        </div>
        <div>
          <dt>Events not yet ticked</dt>
          <dd>{formatNumber(queue.new_events)}</dd>
        </div>
        <div>
          <dt>Last tick</dt>
          <dd>{queue.last_tick_id === null ? '—' : `#${queue.last_tick_id}`}</dd>
        </div>
        <div>
          <dt>Since last tick</dt>
          <dd>
            {queue.ticker_lag_seconds === null
              ? '—'
              : formatDuration(queue.ticker_lag_seconds * 1000)}
          </dd>
        </div>
        <div>
          <dt>Events per second</dt>
          <dd>{formatNumber(queue.events_per_second, 2)}</dd>
        </div>
        <div>
          <dt>Ticker</dt>
          <dd>{queue.ticker_paused ? 'paused' : 'running'}</dd>
        </div>
      </dl>
      <p className="hint">
        Depth: events the slowest consumer has still to process (an estimate). Last active: a
        member’s last heartbeat, fetch or takeover. A member holding a batch sends heartbeats while
        it works on it.
      </p>
      <TableRegion label={`Consumers of ${queue.queue_name}`}>
        <table className="consumers responsive">
          <caption>Consumers and cooperative members (replicas)</caption>
          <thead>
            <tr>
              <th scope="col">Consumer / replica</th>
              <th scope="col">Holds batch</th>
              <th scope="col">Last active</th>
              <th scope="col">Lag</th>
              <th scope="col" className="num">
                Pending events
              </th>
            </tr>
          </thead>
          <tbody>
            {queue.consumers.length === 0 ? (
              <tr>
                <td colSpan={5} className="muted">
                  No consumer.
                </td>
              </tr>
            ) : null}
            {queue.consumers.map((c) => (
              <ConsumerRows key={c.name} consumer={c} />
            ))}
          </tbody>
        </table>
      </TableRegion>
    </Section>
  );
}

/**
 * Events the slowest consumer has still to finish: its pending ticked events plus the events
 * not yet in a tick (both are the engine's estimates).
 */
function depthOf(queue: Queue): number | null {
  const pending = queue.consumers
    .map((c) => c.pending_events)
    .filter((p): p is number => p !== null);
  if (pending.length === 0 && queue.new_events === null) return null;
  return (pending.length > 0 ? Math.max(...pending) : 0) + (queue.new_events ?? 0);
}

function ConsumerRows({ consumer }: { consumer: Consumer }) {
  const coop = consumer.subconsumers.length > 0;
  return (
    <>
      <tr className="consumer-row">
        <th scope="row">
          {consumer.name}
          {coop ? (
            <span className="muted small">
              {' '}
              cooperative, {consumer.subconsumers.length} members
            </span>
          ) : null}
        </th>
        <td data-label="Holds batch">{coop ? '' : batchText(consumer.current_batch)}</td>
        <ActivityCells of={consumer} />
      </tr>
      {consumer.subconsumers.map((m) => (
        <tr
          key={m.name}
          className={`member-row${m.current_batch !== null ? ' busy' : ''}`}
          data-subconsumer={m.name}
        >
          <th scope="row" className="member">
            <span aria-hidden="true">└ </span>
            <span className="visually-hidden">member </span>
            <span className="replica">{m.name}</span>
          </th>
          <td data-label="Holds batch" className="batch">
            {batchText(m.current_batch)}
          </td>
          <ActivityCells of={m} />
        </tr>
      ))}
    </>
  );
}

/** Last active, lag and pending events of a consumer or of one member. */
function ActivityCells({
  of,
}: {
  of: {
    last_seen_seconds: number | null;
    lag_seconds: number | null;
    pending_events: number | null;
  };
}) {
  return (
    <>
      <td data-label="Last active">{formatAgo(of.last_seen_seconds)}</td>
      <td data-label="Lag">
        {of.lag_seconds === null ? '—' : formatDuration(of.lag_seconds * 1000)}
      </td>
      <td data-label="Pending events" className="num">
        {formatNumber(of.pending_events)}
      </td>
    </>
  );
}

function batchText(batch: number | null): string {
  return batch === null ? 'idle' : `batch ${batch}`;
}

function TakeoverSection({ queue, consumer }: { queue: string; consumer: string }) {
  const path = `/api/queues/${encodeURIComponent(queue)}/consumers/${encodeURIComponent(consumer)}/takeovers`;
  const takeovers = useQuery({
    ...pathQuery<Takeovers>(keys.operations, `${path}?limit=50`),
    refetchInterval: 3000,
  });
  const data = takeovers.data;
  const id = `takeovers-${consumer}`;
  return (
    <Section id={id} title={`Takeovers in ${consumer}`}>
      <p className="muted small">
        A member that stops sending heartbeats while it holds a batch loses it to another member
        after the dead interval.
      </p>
      <LoadState loading={takeovers.isPending} error={takeovers.error} empty={!data} />
      {data && !data.available ? (
        <p className="notice">
          The installed queue engine does not report takeovers yet (no{' '}
          <code>pgque.get_coop_takeovers</code>).
        </p>
      ) : null}
      {data?.available && data.items.length === 0 ? (
        <p className="muted">No takeover recorded.</p>
      ) : null}
      {data && data.items.length > 0 ? (
        <TableRegion label={`Takeovers in ${consumer}`}>
          <table className="takeovers responsive">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">From replica</th>
                <th scope="col">To replica</th>
                <th scope="col">Batch</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((t) => (
                <tr
                  key={`${t.taken_at}:${t.old_subconsumer}:${t.new_batch_id}`}
                  data-old-subconsumer={t.old_subconsumer}
                  data-new-subconsumer={t.new_subconsumer}
                >
                  <td data-label="When">{formatDateTime(t.taken_at)}</td>
                  <td data-label="From replica" className="replica">
                    {t.old_subconsumer}
                  </td>
                  <td data-label="To replica" className="replica">
                    {t.new_subconsumer}
                  </td>
                  <td data-label="Batch">
                    <span>
                      {t.old_batch_id ?? '—'} → {t.new_batch_id ?? '—'}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      ) : null}
    </Section>
  );
}

const RANGES = [
  { value: '15', label: 'Last 15 minutes', minutes: 15, bucket: 30 },
  { value: '60', label: 'Last hour', minutes: 60, bucket: 60 },
  { value: '360', label: 'Last 6 hours', minutes: 360, bucket: 600 },
  { value: '1440', label: 'Last 24 hours', minutes: 1440, bucket: 1800 },
];

/** Alerts not delivered yet, each channel with its state, and the endpoints that are failing. */
function OutstandingSection() {
  const outstanding = useQuery({
    ...pathQuery<OutstandingDeliveries>(keys.operations, '/api/deliveries/outstanding?limit=100'),
    refetchInterval: 3000,
  });
  const data = outstanding.data;
  return (
    <Section id="outstanding-deliveries" title="Undelivered alerts">
      <LoadState loading={outstanding.isPending} error={outstanding.error} empty={!data} />
      {data && data.endpoints.length > 0 ? (
        <TableRegion label="Failing endpoints">
          <table className="responsive">
            <caption className="visually-hidden">
              Endpoints whose circuit is open or failing
            </caption>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Circuit</th>
                <th scope="col">Failures in a row</th>
                <th scope="col">Next probe</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {data.endpoints.map((e) => (
                <tr key={e.endpoint} data-endpoint={e.endpoint} data-circuit={e.state}>
                  <td data-label="Endpoint" className="break">
                    {e.endpoint}
                  </td>
                  <td data-label="Circuit">
                    <span className={`badge delivery-${e.state === 'open' ? 'failed' : 'pending'}`}>
                      {e.state === 'open' ? 'Open' : 'Closed'}
                    </span>
                    {e.opened_at ? (
                      <span className="small"> since {formatDateTime(e.opened_at)}</span>
                    ) : null}
                  </td>
                  <td data-label="Failures in a row" className="num">
                    {e.consecutive_failures}
                  </td>
                  <td data-label="Next probe">{formatDateTime(e.probe_at)}</td>
                  <td data-label="Last error" className="break small">
                    {e.last_error ?? '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      ) : null}
      {data && data.items.length === 0 ? <p className="muted">Every alert is delivered.</p> : null}
      {data && data.items.length > 0 ? (
        <TableRegion label="Undelivered alerts">
          <table className="responsive">
            <caption className="visually-hidden">
              Alert deliveries not delivered yet, newest first, with their state
            </caption>
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">Ticket</th>
                <th scope="col">Channel</th>
                <th scope="col">Recipient</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((d) => (
                <tr key={d.id} data-delivery-id={d.id} data-state={d.state}>
                  <td data-label="Alert">
                    {label(d.alert_type)} {d.alert_id}
                  </td>
                  <td data-label="Ticket">
                    <Link to={`/tickets/${d.ticket_id}`}>#{d.ticket_id}</Link>
                  </td>
                  <td data-label="Channel">{label(d.channel)}</td>
                  <td data-label="Recipient" className="break">
                    {d.recipient}
                  </td>
                  <td data-label="State">
                    <DeliveryProgress d={d} />
                  </td>
                  <td data-label="Attempts" className="num">
                    {d.attempts}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      ) : null}
    </Section>
  );
}

function DeliveryChart() {
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
    <dl className="figures" aria-label="Alert timeliness">
      <div>
        <dt>Lateness p50, last hour</dt>
        <dd>{formatSeconds(lateness.p50_seconds)}</dd>
      </div>
      <div>
        <dt>Lateness p99, last hour</dt>
        <dd>{formatSeconds(lateness.p99_seconds)}</dd>
      </div>
      <div>
        <dt>Deliveries, last hour</dt>
        <dd>{formatNumber(lateness.deliveries)}</dd>
      </div>
      <div>
        <dt>Undelivered alerts</dt>
        <dd>{formatNumber(undelivered.count)}</dd>
      </div>
      <div>
        <dt>Oldest undelivered</dt>
        <dd>
          {oldest ? (
            <>
              <Link to={`/tickets/${oldest.ticket_id}`}>
                {oldest.alert_type} #{oldest.alert_id}, ticket #{oldest.ticket_id}
              </Link>{' '}
              <span className="muted small">due {formatAgo(oldest.age_seconds)}</span>
            </>
          ) : (
            'none'
          )}
        </dd>
      </div>
    </dl>
  );
}

function DeadLetterSection({ queue }: { queue: string }) {
  const path = `/api/queues/${encodeURIComponent(queue)}/dead-letters`;
  const letters = useQuery({
    ...pathQuery<{ items: DeadLetter[] }>(keys.operations, `${path}?limit=100`),
    refetchInterval: 3000,
  });
  const [status, setStatus] = useState<{ text: string; error?: boolean } | undefined>();
  const [busy, setBusy] = useState<number | undefined>();
  // replayed letters leave the list at once, not at the next poll
  const [replayed, setReplayed] = useState<Set<number>>(() => new Set());
  const replay = async (letter: DeadLetter) => {
    setBusy(letter.id);
    setStatus(undefined);
    try {
      const result = await api<{ dead_letter_id: number; event_id: number }>(
        'POST',
        `/api/dead-letters/${letter.id}/replay`,
      );
      setStatus({
        text: `Dead letter ${result.dead_letter_id} replayed as event ${result.event_id}.`,
      });
      setReplayed((done) => new Set(done).add(letter.id));
      void letters.refetch();
    } catch (error) {
      setStatus({ text: `Replay failed: ${(error as Error).message}`, error: true });
    } finally {
      setBusy(undefined);
    }
  };
  const items = (letters.data?.items ?? []).filter((d) => !replayed.has(d.id));
  return (
    <Section id={`dead-letters-${queue.replace(/\W+/g, '-')}`} title={`Dead letters of ${queue}`}>
      <p role="status" className={status?.error ? 'notice error' : 'notice ok'} hidden={!status}>
        {status?.text}
      </p>
      <LoadState
        loading={letters.isPending}
        error={letters.error}
        empty={items.length === 0}
        emptyText="No dead letters."
      />
      {items.length > 0 ? (
        <TableRegion label={`Dead letters of ${queue}`}>
          <table className="dead-letters responsive">
            <thead>
              <tr>
                <th scope="col" className="num">
                  #
                </th>
                <th scope="col">Dead since</th>
                <th scope="col">Type</th>
                <th scope="col">Ticket</th>
                <th scope="col">Event</th>
                <th scope="col">Reason</th>
                <th scope="col">Payload</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.id} data-dead-letter-id={d.id}>
                  <td data-label="#" className="num">
                    {d.id}
                  </td>
                  <td data-label="Dead since">{formatDateTime(d.dead_at)}</td>
                  <td data-label="Type">{d.type ?? '—'}</td>
                  <td data-label="Ticket">
                    {ticketOf(d.payload) ? (
                      <Link to={`/tickets/${ticketOf(d.payload)}`}>#{ticketOf(d.payload)}</Link>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td data-label="Event">
                    <span>
                      {d.event_id}
                      {d.retry_count ? (
                        <span className="muted small"> ({d.retry_count} retries)</span>
                      ) : null}
                    </span>
                  </td>
                  <td data-label="Reason" className="break">
                    <LongText text={d.reason ?? '—'} />
                  </td>
                  <td data-label="Payload" className="payload">
                    <details>
                      <summary>Show</summary>
                      <pre>{prettyJson(d.payload)}</pre>
                    </details>
                  </td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      disabled={busy !== undefined}
                      onClick={() => replay(d)}
                      aria-label={`Replay dead letter ${d.id}`}
                    >
                      {busy === d.id ? 'Replaying…' : 'Replay'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      ) : null}
    </Section>
  );
}

/** The ticket a dead event is about, when its payload names one that can exist. */
function ticketOf(payload: string | null): number | undefined {
  if (!payload) return undefined;
  try {
    const id = (JSON.parse(payload) as { ticket_id?: unknown }).ticket_id;
    const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
    return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Long text shows its start; the rest opens on demand. */
function LongText({ text }: { text: string }) {
  if (text.length <= 140) return <span>{text}</span>;
  return (
    <details className="long-text">
      <summary>{text.slice(0, 120)}…</summary>
      <span>{text}</span>
    </details>
  );
}

function prettyJson(text: string | null): string {
  if (text === null) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function JobSection() {
  const jobs = useQuery({
    ...pathQuery<JobOverview>(keys.operations, '/api/job-runs?limit=12'),
    refetchInterval: 5000,
  });
  const data = jobs.data;
  return (
    <Section id="jobs" title="Jobs">
      <LoadState loading={jobs.isPending} error={jobs.error} empty={!data} />
      {data ? (
        <div className="grid-2">
          <div>
            <h3>Recent runs</h3>
            {data.runs.length === 0 ? <p className="muted">No run recorded yet.</p> : null}
            {data.runs.length > 0 ? (
              <TableRegion label="Recent job runs">
                <table className="responsive">
                  <thead>
                    <tr>
                      <th scope="col">Finished</th>
                      <th scope="col">Job</th>
                      <th scope="col">Result</th>
                      <th scope="col" className="num">
                        Took
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.runs.map((run) => (
                      <tr key={run.id}>
                        <td data-label="Finished">{formatDateTime(run.finished_at)}</td>
                        <td data-label="Job">
                          <span>
                            {run.task} <span className="muted small">#{run.job_id}</span>
                          </span>
                        </td>
                        <td data-label="Result">
                          {run.error ? (
                            <span className="error-text">
                              failed (attempt {run.attempts} of {run.max_attempts}): {run.error}
                            </span>
                          ) : (
                            <span className="ok-text">succeeded</span>
                          )}
                        </td>
                        <td data-label="Took" className="num">
                          {run.duration_ms === null ? '—' : `${formatNumber(run.duration_ms)} ms`}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableRegion>
            ) : null}
          </div>
          <div>
            <h3>Queued and running</h3>
            {data.queued.length === 0 ? <p className="muted">No job waiting.</p> : null}
            {data.queued.length > 0 ? (
              <ul className="plain">
                {data.queued.map((job) => (
                  <li key={job.id}>
                    <strong>{job.task}</strong> #{job.id}:{' '}
                    {job.locked_at
                      ? `running since ${formatDateTime(job.locked_at)} on ${job.locked_by ?? '?'}`
                      : `due ${formatDateTime(job.run_at)}`}
                    {job.last_error ? (
                      <span className="error-text">
                        {' '}
                        (attempt {job.attempts}/{job.max_attempts}: {job.last_error})
                      </span>
                    ) : null}
                  </li>
                ))}
              </ul>
            ) : null}
            <h3>Schedule</h3>
            <ul className="plain">
              {data.cron.map((c) => (
                <li key={c.identifier}>
                  <strong>{c.identifier}</strong>: last scheduled {formatDateTime(c.last_execution)}
                </li>
              ))}
            </ul>
          </div>
        </div>
      ) : null}
    </Section>
  );
}
