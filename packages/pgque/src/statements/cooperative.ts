// Cooperative groups: members join, receive their share, send heartbeats, leave.
import { PgqueInvalidInputError } from '../errors.js';
import type { Queryable } from '../queryable.js';
import {
  intervalText,
  MAX_INT4,
  requireCoopName,
  requireInteger,
  requireName,
} from '../validation.js';
import { MESSAGE_COLUMNS, type Message, messageFromRow } from './consume.js';
import { runStatement } from './run.js';

/**
 * Registers member `subconsumer` of group `consumer`; 1 when anything was created.
 * `convertNormal` turns an idle normal consumer of that name into the group.
 */
export async function subscribeSubconsumer(
  db: Queryable,
  queue: string,
  consumer: string,
  subconsumer: string,
  options: { convertNormal?: boolean } = {},
): Promise<number> {
  const op = 'subscribeSubconsumer';
  coopNames(op, queue, consumer, subconsumer);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    'select pgque.subscribe_subconsumer($1, $2, $3, $4) as r',
    [queue, consumer, subconsumer, options.convertNormal ?? false],
  );
  return Number(rows[0]?.r);
}

/**
 * Removes a member. With `batchHandling: 1` a batch it holds is handed back first
 * (each event retried in 60 s or dead-lettered); with 0 (default) that is refused.
 */
export async function unsubscribeSubconsumer(
  db: Queryable,
  queue: string,
  consumer: string,
  subconsumer: string,
  options: { batchHandling?: 0 | 1 } = {},
): Promise<number> {
  const op = 'unsubscribeSubconsumer';
  coopNames(op, queue, consumer, subconsumer);
  const handling = options.batchHandling ?? 0;
  if (handling !== 0 && handling !== 1) {
    throw new PgqueInvalidInputError(`${op}: batchHandling must be 0 or 1`, 'batchHandling', {
      operation: op,
    });
  }
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    'select pgque.unsubscribe_subconsumer($1, $2, $3, $4) as r',
    [queue, consumer, subconsumer, handling],
  );
  return Number(rows[0]?.r);
}

/**
 * The member's batch (registering it on first use), at most `maxMessages` (default 100)
 * of its events. With `deadInterval` (ms or interval text), a batch of a member silent
 * for that long is taken over.
 */
export async function receiveCoop(
  db: Queryable,
  queue: string,
  consumer: string,
  subconsumer: string,
  options: { maxMessages?: number; deadInterval?: number | string } = {},
): Promise<Message[]> {
  const op = 'receiveCoop';
  coopNames(op, queue, consumer, subconsumer);
  const maxMessages = requireInteger(options.maxMessages ?? 100, 'maxMessages', op, {
    min: 1,
    max: MAX_INT4,
  });
  const dead =
    options.deadInterval === undefined
      ? null
      : intervalText(options.deadInterval, 'deadInterval', op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    `select ${MESSAGE_COLUMNS} from pgque.receive_coop($1, $2, $3, $4, $5::interval)`,
    [queue, consumer, subconsumer, maxMessages, dead],
  );
  return rows.map(messageFromRow);
}

/** Heartbeat of a member, keeping its batch from takeover: 1, or 0 when not a member. */
export async function touchSubconsumer(
  db: Queryable,
  queue: string,
  consumer: string,
  subconsumer: string,
): Promise<number> {
  const op = 'touchSubconsumer';
  coopNames(op, queue, consumer, subconsumer);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    'select pgque.touch_subconsumer($1, $2, $3) as r',
    [queue, consumer, subconsumer],
  );
  return Number(rows[0]?.r);
}

function coopNames(op: string, queue: string, consumer: string, subconsumer: string): void {
  requireName(queue, 'queue', op);
  requireCoopName(consumer, 'consumer', op);
  requireCoopName(subconsumer, 'subconsumer', op);
}
