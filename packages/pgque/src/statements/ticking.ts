// Ticking and maintenance: ticker, force_next_tick, the retry mover, table rotation,
// expiry of idempotency keys.
import type { Queryable } from '../queryable.js';
import { asBigIntOrNull } from '../row-values.js';
import { requireName } from '../validation.js';
import { runStatement } from './run.js';

/** Ticks one queue if it is due; the new tick id, or null. */
export async function ticker(db: Queryable, queue: string): Promise<bigint | null> {
  const op = 'ticker';
  requireName(queue, 'queue', op);
  const rows = await runStatement(db, op, { queue }, 'select pgque.ticker($1) as t', [queue]);
  return asBigIntOrNull(rows[0]?.t);
}

/** Ticks every queue that is due; how many got a tick. */
export async function tickerAll(db: Queryable): Promise<number> {
  const rows = await runStatement(db, 'tickerAll', {}, 'select pgque.ticker() as n', []);
  return Number(rows[0]?.n);
}

/** Makes the next `ticker` call tick this queue; returns the newest existing tick id. */
export async function forceNextTick(db: Queryable, queue: string): Promise<bigint | null> {
  const op = 'forceNextTick';
  requireName(queue, 'queue', op);
  const rows = await runStatement(db, op, { queue }, 'select pgque.force_next_tick($1) as t', [
    queue,
  ]);
  return asBigIntOrNull(rows[0]?.t);
}

/** Moves every due retry back into its queue; how many moved. */
export async function maintRetryEvents(db: Queryable): Promise<number> {
  const rows = await runStatement(
    db,
    'maintRetryEvents',
    {},
    'select pgque.maint_retry_events() as n',
    [],
  );
  return Number(rows[0]?.n);
}

/**
 * Periodic maintenance: `pgque.maint()` (table rotation step 1, which also parks the
 * events of partition slots whose lease lapsed, and each queue's hooks, such as
 * `maint_idem` for the queues that had an idempotent send), then rotation step 2
 * in a separate transaction, as the engine requires: pass a pool or an autocommit
 * connection, never one inside BEGIN.
 */
export async function maint(db: Queryable): Promise<void> {
  await runStatement(db, 'maint', {}, 'select pgque.maint()', []);
  await runStatement(db, 'maint', {}, 'select pgque.maint_rotate_tables_step2()', []);
}

/**
 * Deletes expired idempotency keys (`pgque.maint_idem`) of one queue, or of all: true when
 * it deleted a full 10,000 and should be called again. `maint` already runs it for every
 * queue that had an idempotent send.
 */
export async function maintIdem(db: Queryable, queue?: string): Promise<boolean> {
  const op = 'maintIdem';
  if (queue !== undefined) requireName(queue, 'queue', op);
  const rows =
    queue === undefined
      ? await runStatement(db, op, {}, 'select pgque.maint_idem() as more', [])
      : await runStatement(db, op, { queue }, 'select pgque.maint_idem($1) as more', [queue]);
  return Number(rows[0]?.more) === 1;
}
