import { Figures } from '../../components/data-table.js';
import { Section, TableRegion } from '../../components/layout.js';
import { formatAgo, formatDuration, formatNumber } from '../../format.js';
import type { Consumer, Queue } from '../../types.js';

/** A queue: its figures, and its consumers with their cooperative members (replicas). */
export function QueueSection({ queue }: { queue: Queue }) {
  const id = `queue-${queue.queue_name.replace(/\W+/g, '-')}`;
  const lags = queue.consumers.map((c) => c.lag_seconds).filter((l): l is number => l !== null);
  const maxLag = lags.length > 0 ? Math.max(...lags) : null;
  return (
    <Section id={id} title={`Queue ${queue.queue_name}`}>
      <Figures
        items={[
          ['Depth', formatNumber(depthOf(queue))],
          ['Slowest consumer lag', maxLag === null ? '—' : formatDuration(maxLag * 1000)],
          ['Events not yet ticked', formatNumber(queue.new_events)],
          ['Last tick', queue.last_tick_id === null ? '—' : `#${queue.last_tick_id}`],
          [
            'Since last tick',
            queue.ticker_lag_seconds === null
              ? '—'
              : formatDuration(queue.ticker_lag_seconds * 1000),
          ],
          ['Events per second', formatNumber(queue.events_per_second, 2)],
          ['Ticker', queue.ticker_paused ? 'paused' : 'running'],
        ]}
      />
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
            {/* slots' consumers in their numbers' order: #2 before #10 */}
            {[...queue.consumers]
              .sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))
              .map((c) => (
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
          className={`member-row${m.current_batch !== null ? ' busy' : ''}${m.gone ? ' gone' : ''}`}
          data-subconsumer={m.name}
        >
          <th scope="row" className="member">
            <span aria-hidden="true">└ </span>
            <span className="visually-hidden">member </span>
            <span className="replica">{m.name}</span>
          </th>
          <td data-label="Holds batch" className="batch">
            {m.gone ? (
              <strong className="member-gone">
                silent for {formatDuration((m.last_seen_seconds ?? 0) * 1000)}: stopped or frozen
                {m.current_batch === null ? '' : ` (held batch ${m.current_batch})`}
              </strong>
            ) : (
              batchText(m.current_batch)
            )}
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
