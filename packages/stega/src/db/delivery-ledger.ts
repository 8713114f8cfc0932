import type pg from 'pg';
import { inTransaction } from './pool.js';

/**
 * One row per (subject, channel, recipient) in stega.alert_deliveries or
 * stega.report_deliveries: the ledger that makes a redelivered event send nothing twice.
 */
export type DeliveryKey =
  | {
      table: 'alert';
      alertType: 'breach' | 'warning';
      alertId: number;
      ticketId: number;
      channel: 'in_app' | 'email' | 'webhook';
      recipient: string;
    }
  | { table: 'report'; reportId: number; channel: 'email' | 'webhook'; recipient: string };

export interface DeliveryContext {
  /** Subconsumer (or consumer) name of the process delivering. */
  deliveredBy: string;
  batchId: bigint;
  eventId: bigint;
}

export type DeliveryOutcome = 'delivered' | 'already_delivered';

/** Table, key columns and key values of a ledger row; built from constants only. */
function ledgerRow(key: DeliveryKey) {
  return key.table === 'alert'
    ? {
        table: 'stega.alert_deliveries',
        columns: ['alert_type', 'alert_id', 'channel', 'recipient'],
        values: [key.alertType, key.alertId, key.channel, key.recipient],
        insertExtra: { ticket_id: key.ticketId },
      }
    : {
        table: 'stega.report_deliveries',
        columns: ['report_id', 'channel', 'recipient'],
        values: [key.reportId, key.channel, key.recipient],
        insertExtra: {},
      };
}

/**
 * Delivers once in effect. In one transaction: make sure the ledger row exists, lock it
 * (a concurrent delivery of the same row waits here), skip it when already delivered,
 * otherwise run `send` and mark the row delivered by this process. When `send` throws,
 * the attempt and its error are recorded (committed) and the error is rethrown, so the
 * caller can nack. `send` gets the transaction, so a database-only channel (in-app) is
 * exactly once; an external one is once unless the process dies between sending and
 * committing, which is what idempotency keys are for.
 */
export async function deliverOnce(
  pool: pg.Pool,
  key: DeliveryKey,
  context: DeliveryContext,
  send: (tx: pg.PoolClient) => Promise<void>,
): Promise<DeliveryOutcome> {
  const row = ledgerRow(key);
  const where = row.columns.map((column, i) => `${column} = $${i + 1}`).join(' and ');
  let failure: unknown;
  const outcome = await inTransaction(pool, async (tx) => {
    const insertColumns = [...row.columns, ...Object.keys(row.insertExtra), 'status'];
    const insertValues = [...row.values, ...Object.values(row.insertExtra), 'pending'];
    await tx.query(
      `insert into ${row.table} (${insertColumns.join(', ')})
       values (${insertValues.map((_, i) => `$${i + 1}`).join(', ')})
       on conflict (${row.columns.join(', ')}) do nothing`,
      insertValues,
    );
    const current = await tx.query(
      `select status from ${row.table} where ${where} for update`,
      row.values,
    );
    if (current.rows[0]?.status === 'delivered') return 'already_delivered' as const;
    const n = row.values.length;
    try {
      await tx.query('savepoint deliver');
      await send(tx);
      await tx.query('release savepoint deliver');
    } catch (error) {
      await tx.query('rollback to savepoint deliver');
      failure = error;
      await tx.query(
        `update ${row.table}
            set status = 'failed', attempts = attempts + 1, last_error = $${n + 1}, updated_at = now()
          where ${where}`,
        [...row.values, String((error as Error).message ?? error).slice(0, 1000)],
      );
      return 'failed' as const;
    }
    await tx.query(
      `update ${row.table}
          set status = 'delivered', attempts = attempts + 1, last_error = null, delivered_at = now(),
              delivered_by = $${n + 1}, updated_at = now()${key.table === 'alert' ? `, batch_id = $${n + 2}, event_id = $${n + 3}` : ''}
        where ${where}`,
      key.table === 'alert'
        ? [...row.values, context.deliveredBy, String(context.batchId), String(context.eventId)]
        : [...row.values, context.deliveredBy],
    );
    return 'delivered' as const;
  });
  if (outcome === 'failed') throw failure;
  return outcome;
}
