// Dead letters: inspect, replay, purge.
import type { Queryable } from '../queryable.js';
import { asBigInt, asBigIntOrNull, asDate, asNumberOrNull, asStringOrNull } from '../row-values.js';
import { intervalText, MAX_INT4, requireId, requireInteger, requireName } from '../validation.js';
import { runStatement } from './run.js';

/** A dead-lettered event (`pgque.dead_letter`, via `dlq_inspect`). */
export interface DeadLetter {
  id: bigint;
  queueId: number;
  consumerId: number;
  deadAt: Date;
  reason: string | null;
  eventId: bigint;
  eventTime: Date;
  txid: bigint | null;
  retryCount: number | null;
  type: string | null;
  payload: string | null;
  extra1: string | null;
  extra2: string | null;
  extra3: string | null;
  extra4: string | null;
}

const DEAD_LETTER_COLUMNS =
  'dl_id, dl_queue_id, dl_consumer_id, dl_time, dl_reason, ev_id, ev_time, ev_txid::text as ev_txid, ev_retry, ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4';

/** The newest dead letters of a queue (default at most 100). */
export async function dlqInspect(db: Queryable, queue: string, limit = 100): Promise<DeadLetter[]> {
  const op = 'dlqInspect';
  requireName(queue, 'queue', op);
  requireInteger(limit, 'limit', op, { min: 1, max: MAX_INT4 });
  const rows = await runStatement(
    db,
    op,
    { queue },
    `select ${DEAD_LETTER_COLUMNS} from pgque.dlq_inspect($1, $2)`,
    [queue, limit],
  );
  return rows.map(deadLetterFromRow);
}

/**
 * Publishes a dead letter again, as a new event for every consumer, and deletes it; the
 * new event's id. Throws `PgqueDeadLetterNotFoundError` for an unknown id.
 */
export async function dlqReplay(db: Queryable, deadLetterId: bigint): Promise<bigint> {
  const op = 'dlqReplay';
  const id = requireId(deadLetterId, 'deadLetterId', op);
  const rows = await runStatement(db, op, {}, 'select pgque.dlq_replay($1) as id', [id]);
  return asBigInt(rows[0]?.id);
}

/** Replays every dead letter of a queue, each on its own. */
export async function dlqReplayAll(
  db: Queryable,
  queue: string,
): Promise<{ replayed: number; failed: number; firstError: string | null }> {
  const op = 'dlqReplayAll';
  requireName(queue, 'queue', op);
  const rows = await runStatement(
    db,
    op,
    { queue },
    'select replayed, failed, first_error from pgque.dlq_replay_all($1)',
    [queue],
  );
  const row = rows[0] ?? {};
  return {
    replayed: Number(row.replayed ?? 0),
    failed: Number(row.failed ?? 0),
    firstError: (row.first_error as string | null | undefined) ?? null,
  };
}

/** Deletes a queue's dead letters older than `olderThan` (ms or interval; default 30 days). */
export async function dlqPurge(
  db: Queryable,
  queue: string,
  olderThan: number | string = '30 days',
): Promise<number> {
  const op = 'dlqPurge';
  requireName(queue, 'queue', op);
  const rows = await runStatement(
    db,
    op,
    { queue },
    'select pgque.dlq_purge($1, $2::interval) as n',
    [queue, intervalText(olderThan, 'olderThan', op)],
  );
  return Number(rows[0]?.n);
}

function deadLetterFromRow(row: Record<string, unknown>): DeadLetter {
  return {
    id: asBigInt(row.dl_id),
    queueId: Number(row.dl_queue_id),
    consumerId: Number(row.dl_consumer_id),
    deadAt: asDate(row.dl_time),
    reason: asStringOrNull(row.dl_reason),
    eventId: asBigInt(row.ev_id),
    eventTime: asDate(row.ev_time),
    txid: asBigIntOrNull(row.ev_txid),
    retryCount: asNumberOrNull(row.ev_retry),
    type: asStringOrNull(row.ev_type),
    payload: asStringOrNull(row.ev_data),
    extra1: asStringOrNull(row.ev_extra1),
    extra2: asStringOrNull(row.ev_extra2),
    extra3: asStringOrNull(row.ev_extra3),
    extra4: asStringOrNull(row.ev_extra4),
  };
}
