// Consuming with a normal consumer: subscribe, receive, ack, nack / reject, and the
// cursor check the consumer loop needs.
import { PgqueInvalidInputError } from '../errors.js';
import type { Queryable } from '../queryable.js';
import { asBigInt, asDate, asNumberOrNull, asStringOrNull } from '../row-values.js';
import {
  MAX_INT4,
  requireId,
  requireInteger,
  requireName,
  requireNonNegative,
} from '../validation.js';
import { inTransaction, runStatement } from './run.js';

/**
 * One event of a batch, as returned by `receive` and `receiveCoop` (the engine's
 * `pgque.message`). The payload is the raw stored text; the high-level consumers parse it.
 */
export interface Message {
  msgId: bigint;
  batchId: bigint;
  type: string;
  payload: string | null;
  /** How many times the event was retried before this delivery; null on the first one. */
  retryCount: number | null;
  /** When the event was first sent (kept across retries). */
  createdAt: Date;
  extra1: string | null;
  extra2: string | null;
  extra3: string | null;
  extra4: string | null;
}

/** One `nack` of a settlement: which message, when to retry (seconds), and why. */
export interface NackRequest {
  message: Pick<Message, 'msgId'> & Partial<Message>;
  /** Seconds before redelivery (rounded by the engine). Default 60. */
  retryAfter?: number;
  /** Stored as the dead-letter reason when this nack exhausts the retries. */
  reason?: string;
  /** Dead-letter at once, without retries (`pgque.reject`): the event can never succeed. */
  reject?: boolean;
}

/** Largest `max_return`: receive a whole batch, so `ack` never skips unseen events. */
export const DEFAULT_MAX_MESSAGES = MAX_INT4;

/** The columns of `pgque.message`, in its field order. */
export const MESSAGE_COLUMNS =
  'msg_id, batch_id, type, payload, retry_count, created_at, extra1, extra2, extra3, extra4';

export function messageFromRow(row: Record<string, unknown>): Message {
  return {
    msgId: asBigInt(row.msg_id),
    batchId: asBigInt(row.batch_id),
    type: String(row.type),
    payload: asStringOrNull(row.payload),
    retryCount: asNumberOrNull(row.retry_count),
    createdAt: asDate(row.created_at),
    extra1: asStringOrNull(row.extra1),
    extra2: asStringOrNull(row.extra2),
    extra3: asStringOrNull(row.extra3),
    extra4: asStringOrNull(row.extra4),
  };
}

/** Registers a normal consumer at the newest tick; 1 when new, 0 when it was already. */
export async function subscribe(db: Queryable, queue: string, consumer: string): Promise<number> {
  const op = 'subscribe';
  requireName(queue, 'queue', op);
  requireName(consumer, 'consumer', op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    'select pgque.subscribe($1, $2) as r',
    [queue, consumer],
  );
  return Number(rows[0]?.r);
}

/** Removes a consumer with its pending retries; 0 when it was not registered. */
export async function unsubscribe(db: Queryable, queue: string, consumer: string): Promise<number> {
  const op = 'unsubscribe';
  requireName(queue, 'queue', op);
  requireName(consumer, 'consumer', op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    'select pgque.unsubscribe($1, $2) as r',
    [queue, consumer],
  );
  return Number(rows[0]?.r);
}

/**
 * The consumer's current batch (reopened from the start until acked), at most
 * `maxMessages` (default 100) of its events. `ack` finishes the whole batch, so pass
 * `DEFAULT_MAX_MESSAGES` unless you know the batch is small. `[]` when nothing is ready.
 */
export async function receive(
  db: Queryable,
  queue: string,
  consumer: string,
  maxMessages = 100,
): Promise<Message[]> {
  const op = 'receive';
  requireName(queue, 'queue', op);
  requireName(consumer, 'consumer', op);
  requireInteger(maxMessages, 'maxMessages', op, { min: 1, max: MAX_INT4 });
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    `select ${MESSAGE_COLUMNS} from pgque.receive($1, $2, $3)`,
    [queue, consumer, maxMessages],
  );
  return rows.map(messageFromRow);
}

/** Finishes a batch: 1, or 0 when it is unknown, already finished or taken over. */
export async function ack(db: Queryable, batchId: bigint): Promise<number> {
  const op = 'ack';
  const id = requireId(batchId, 'batchId', op);
  const rows = await runStatement(db, op, { batchId: id }, 'select pgque.ack($1) as r', [id]);
  return Number(rows[0]?.r);
}

/**
 * Hands one message back: retried after `retryAfter` seconds (default 60), or
 * dead-lettered with `reason` once the queue's `max_retries` is reached. The batch stays
 * open; `ack` it afterwards. Throws `PgqueBatchNotFoundError` for a stale batch.
 */
export async function nack(
  db: Queryable,
  batchId: bigint,
  message: NackRequest['message'],
  options: { retryAfter?: number; reason?: string } = {},
): Promise<void> {
  const op = 'nack';
  const id = requireId(batchId, 'batchId', op);
  const [request] = nackArrays([{ message, ...options }], op);
  await runStatement(
    db,
    op,
    { batchId: id },
    `select pgque.nack($1, row($2::bigint, $1, $3, $4, $5, $6, $7, $8, $9, $10)::pgque.message,
                       $11::float8 * interval '1 second', $12)`,
    [
      id,
      request?.msgId,
      message.type ?? null,
      message.payload ?? null,
      message.retryCount ?? null,
      message.createdAt ?? null,
      message.extra1 ?? null,
      message.extra2 ?? null,
      message.extra3 ?? null,
      message.extra4 ?? null,
      request?.retryAfter,
      request?.reason ?? null,
    ],
  );
}

/**
 * Nacks (or rejects) `nacks` and acks the batch in one transaction, so a broken
 * connection leaves either all of it or none. Returns the ack result (1, or 0 when the
 * batch was already finished); throws `PgqueBatchNotFoundError` when a nack finds the
 * batch gone. On a pool it opens its own transaction; on a connection of the caller's it
 * runs in whatever transaction the caller has open.
 */
export async function settle(
  db: Queryable,
  batchId: bigint,
  nacks: NackRequest[] = [],
): Promise<number> {
  const op = 'settle';
  const id = requireId(batchId, 'batchId', op);
  const requests = nackArrays(nacks, op);
  if (requests.length === 0) {
    // nothing to nack: the ack alone is one statement, no transaction block needed
    const rows = await runStatement(db, op, { batchId: id }, 'select pgque.ack($1) as r', [id]);
    return Number(rows[0]?.r);
  }
  return inTransaction(db, op, { batchId: id }, async (tx) => {
    const retries = requests.filter((r) => !r.reject);
    const rejects = requests.filter((r) => r.reject);
    if (retries.length > 0) {
      await tx.query(
        `select count(pgque.nack($1, row(n.id, $1, null, null, null, null, null, null, null, null)::pgque.message,
                                 n.delay * interval '1 second', n.reason))
           from unnest($2::bigint[], $3::float8[], $4::text[]) as n(id, delay, reason)`,
        [
          id,
          retries.map((r) => r.msgId),
          retries.map((r) => r.retryAfter),
          retries.map((r) => r.reason),
        ],
      );
    }
    if (rejects.length > 0) {
      await tx.query(
        `select count(pgque.reject($1, row(n.id, $1, null, null, null, null, null, null, null, null)::pgque.message, n.reason))
           from unnest($2::bigint[], $3::text[]) as n(id, reason)`,
        [id, rejects.map((r) => r.msgId), rejects.map((r) => r.reason)],
      );
    }
    const { rows } = await tx.query('select pgque.ack($1) as r', [id]);
    return Number(rows[0]?.r);
  });
}

/**
 * Whether `consumer`'s cursor is behind the queue's newest tick (one round trip). An
 * empty window is finished by the engine and returns nothing, so an empty receive alone
 * does not prove that the consumer caught up. Read from the tables pgque_reader may read
 * (get_consumer_info and get_queue_info say the same, with figures this check does not need,
 * at some twenty times the cost: a consumer loop asks after every batch).
 */
export async function ticksPending(
  db: Queryable,
  queue: string,
  consumer: string,
): Promise<boolean> {
  const op = 'ticksPending';
  requireName(queue, 'queue', op);
  requireName(consumer, 'consumer', op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    `select coalesce((
       select s.sub_last_tick < (select t.tick_id from pgque.tick t
                                  where t.tick_queue = s.sub_queue
                                  order by t.tick_id desc limit 1)
         from pgque.subscription s
         join pgque.queue q on q.queue_id = s.sub_queue
         join pgque.consumer c on c.co_id = s.sub_consumer
        where q.queue_name = $1::text and c.co_name = $2::text
        limit 1), false) as pending`,
    [queue, consumer],
  );
  return rows[0]?.pending === true;
}

/** Checks a settlement's nacks and reads out what the engine calls need. */
export function nackArrays(
  nacks: NackRequest[],
  operation: string,
): { msgId: bigint; retryAfter: number; reason: string | null; reject: boolean }[] {
  if (!Array.isArray(nacks)) {
    throw new PgqueInvalidInputError(`${operation}: nacks must be an array`, 'nacks', {
      operation,
    });
  }
  return nacks.map((nack, i) => {
    if (!nack?.message || typeof nack.message !== 'object') {
      throw new PgqueInvalidInputError(`${operation}: nacks[${i}].message is required`, 'message', {
        operation,
      });
    }
    const reason = nack.reason;
    if (reason !== undefined && reason !== null && typeof reason !== 'string') {
      throw new PgqueInvalidInputError(`${operation}: reason must be a string`, 'reason', {
        operation,
      });
    }
    return {
      msgId: requireId(nack.message.msgId, 'message.msgId', operation),
      retryAfter: requireNonNegative(nack.retryAfter ?? 60, 'retryAfter', operation),
      reason: reason ?? null,
      reject: nack.reject === true,
    };
  });
}
