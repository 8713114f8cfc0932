// Producing: send (with a partition key), insert_event, send_batch, send_idem.
import { PgqueInvalidInputError } from '../errors.js';
import type { Queryable } from '../queryable.js';
import { asBigInt, asBigIntArray } from '../row-values.js';
import { intervalText, payloadToJson, requireName } from '../validation.js';
import { runStatement } from './run.js';

/** An event to send. */
export interface OutgoingEvent {
  /** Event type; empty or missing means `'default'`. */
  type?: string;
  /** Any JSON-serialisable value; stored as its JSON text. `undefined` is stored as `null`. */
  payload?: unknown;
  /**
   * Partition key (PgQue 0.3): every event of one key goes to the same slot of a
   * partitioned consumer, which delivers them in order. Stored in `extra1`, so the two
   * cannot both be given. `null` or absent: slot 0 of a partitioned consumer.
   */
  partitionKey?: string | null;
  extra1?: string | null;
  extra2?: string | null;
  extra3?: string | null;
  extra4?: string | null;
}

/** An event to send once per idempotency key (`sendIdempotent`). */
export interface IdempotentEvent extends OutgoingEvent {
  /**
   * Names the effect, not the entity: the same key within the TTL sends nothing new (e.g.
   * `tenant-7:order-42:capture:v2`, or an email's Message-ID). Required.
   */
  idemKey: string;
  /** How long the key holds, in ms or Postgres interval text. Default one hour. */
  ttl?: number | string;
}

/** What `sendIdempotent` did: the event's id, and whether an earlier send already made it. */
export interface IdempotentSend {
  eventId: bigint;
  /** True when the key was live: nothing was appended, `eventId` is the first send's. */
  deduped: boolean;
}

/**
 * Sends one event (`pgque.send`, with its partition key when it has one, or
 * `pgque.insert_event` when it has extras); its id. On a connection inside BEGIN … COMMIT
 * the event commits (or rolls back) with the caller's work.
 */
export async function send(
  db: Queryable,
  queue: string,
  event: OutgoingEvent = {},
): Promise<bigint> {
  const op = 'send';
  requireName(queue, 'queue', op);
  const { type, payload, extras } = outgoing(event, op);
  let rows: Record<string, unknown>[];
  if (extras.slice(1).some((extra) => extra !== null)) {
    rows = await runStatement(
      db,
      op,
      { queue },
      'select pgque.insert_event($1, $2, $3, $4, $5, $6, $7) as id',
      [queue, type, payload, ...extras],
    );
  } else if (extras[0] !== null) {
    rows = await runStatement(db, op, { queue }, 'select pgque.send($1, $2, $3::text, $4) as id', [
      queue,
      type,
      payload,
      extras[0],
    ]);
  } else {
    rows = await runStatement(db, op, { queue }, 'select pgque.send($1, $2, $3::text) as id', [
      queue,
      type,
      payload,
    ]);
  }
  return asBigInt(rows[0]?.id);
}

/**
 * Sends one event at most once per idempotency key while the key holds
 * (`pgque.send_idem`): the first call appends it; a repeat (a retry after a lost answer,
 * a redelivered input) appends nothing and answers the first event's id with
 * `deduped: true`. Type, payload and partition key of a repeat are not compared. In the
 * caller's transaction, the key's claim and the event commit or roll back together.
 * Only `partitionKey` of the extras can be given (send_idem stores no others).
 */
export async function sendIdempotent(
  db: Queryable,
  queue: string,
  event: IdempotentEvent,
): Promise<IdempotentSend> {
  const op = 'sendIdempotent';
  requireName(queue, 'queue', op);
  const { type, payload, extras } = outgoing(event, op);
  if (extras.slice(1).some((extra) => extra !== null)) {
    throw new PgqueInvalidInputError(
      `${op}: extra2 … extra4 cannot be sent idempotently (only partitionKey / extra1)`,
      'extra2',
      { operation: op },
    );
  }
  if (typeof event.idemKey !== 'string' || event.idemKey === '') {
    throw new PgqueInvalidInputError(`${op}: idemKey must be a non-empty string`, 'idemKey', {
      operation: op,
    });
  }
  const ttl = event.ttl === undefined ? '1 hour' : intervalText(event.ttl, 'ttl', op);
  const rows = await runStatement(
    db,
    op,
    { queue },
    'select event_id, deduped from pgque.send_idem($1, $2, $3::text, $4, $5::interval, $6)',
    [queue, type, payload, event.idemKey, ttl, extras[0]],
  );
  return { eventId: asBigInt(rows[0]?.event_id), deduped: rows[0]?.deduped === true };
}

/** Type, payload text and the four extras (the partition key as extra1) of an event. */
function outgoing(
  event: OutgoingEvent,
  op: string,
): { type: string; payload: string; extras: (string | null)[] } {
  if (event === null || typeof event !== 'object') {
    throw new PgqueInvalidInputError(`${op}: event must be an object`, 'event', {
      operation: op,
    });
  }
  const extras = [event.extra1, event.extra2, event.extra3, event.extra4].map((extra, i) =>
    optionalText(extra, `extra${i + 1}`, op),
  );
  const key = optionalText(event.partitionKey, 'partitionKey', op);
  if (key !== null && extras[0] !== null) {
    throw new PgqueInvalidInputError(
      `${op}: partitionKey is stored in extra1; give one of them, not both`,
      'partitionKey',
      { operation: op },
    );
  }
  extras[0] = key ?? extras[0] ?? null;
  return {
    type: eventType(event.type, op),
    payload: payloadToJson(event.payload, 'payload', op),
    extras,
  };
}

/** Sends many events of one type in one statement; ids are aligned with `payloads`. */
export async function sendBatch(
  db: Queryable,
  queue: string,
  type: string | undefined,
  payloads: unknown[],
): Promise<bigint[]> {
  const op = 'sendBatch';
  requireName(queue, 'queue', op);
  if (!Array.isArray(payloads)) {
    throw new PgqueInvalidInputError(`${op}: payloads must be an array`, 'payloads', {
      operation: op,
    });
  }
  const texts = payloads.map((payload, i) => payloadToJson(payload, `payloads[${i}]`, op));
  const rows = await runStatement(
    db,
    op,
    { queue },
    'select pgque.send_batch($1, $2, $3::text[]) as ids',
    [queue, eventType(type, op), texts],
  );
  return asBigIntArray(rows[0]?.ids);
}

function eventType(type: unknown, operation: string): string {
  if (type === undefined || type === null || type === '') return 'default';
  if (typeof type !== 'string') {
    throw new PgqueInvalidInputError(`${operation}: type must be a string`, 'type', { operation });
  }
  return type;
}

function optionalText(value: unknown, field: string, operation: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new PgqueInvalidInputError(`${operation}: ${field} must be a string or null`, field, {
      operation,
    });
  }
  return value;
}
