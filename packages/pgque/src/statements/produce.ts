// Producing: send, insert_event, send_batch.
import { PgqueInvalidInputError } from '../errors.js';
import type { Queryable } from '../queryable.js';
import { asBigInt, asBigIntArray } from '../row-values.js';
import { payloadToJson, requireName } from '../validation.js';
import { runStatement } from './run.js';

/** An event to send. */
export interface OutgoingEvent {
  /** Event type; empty or missing means `'default'`. */
  type?: string;
  /** Any JSON-serialisable value; stored as its JSON text. `undefined` is stored as `null`. */
  payload?: unknown;
  extra1?: string | null;
  extra2?: string | null;
  extra3?: string | null;
  extra4?: string | null;
}

/**
 * Sends one event (`pgque.send`, or `pgque.insert_event` when it has extras); its id. On a
 * connection inside BEGIN … COMMIT the event commits (or rolls back) with the caller's work.
 */
export async function send(
  db: Queryable,
  queue: string,
  event: OutgoingEvent = {},
): Promise<bigint> {
  const op = 'send';
  requireName(queue, 'queue', op);
  if (event === null || typeof event !== 'object') {
    throw new PgqueInvalidInputError(`${op}: event must be an object`, 'event', {
      operation: op,
    });
  }
  const type = eventType(event.type, op);
  const payload = payloadToJson(event.payload, 'payload', op);
  const extras = [event.extra1, event.extra2, event.extra3, event.extra4].map((extra, i) =>
    optionalText(extra, `extra${i + 1}`, op),
  );
  const rows = extras.some((extra) => extra !== null)
    ? await runStatement(
        db,
        op,
        { queue },
        'select pgque.insert_event($1, $2, $3, $4, $5, $6, $7) as id',
        [queue, type, payload, ...extras],
      )
    : await runStatement(db, op, { queue }, 'select pgque.send($1, $2, $3::text) as id', [
        queue,
        type,
        payload,
      ]);
  return asBigInt(rows[0]?.id);
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
