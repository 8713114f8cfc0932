// Takeovers of silent members' batches (`pgque.get_coop_takeovers`).
import type { Queryable } from '../queryable.js';
import { asBigIntOrNull, asDate, asNumberOrNull } from '../row-values.js';
import { MAX_INT4, requireInteger, requireName } from '../validation.js';
import { runStatement } from './run.js';

/** One takeover: a member's batch handed to another after it fell silent. */
export interface CoopTakeover {
  takenAt: Date;
  queueName: string;
  consumerName: string;
  oldSubconsumer: string;
  newSubconsumer: string;
  oldBatchId: bigint | null;
  newBatchId: bigint | null;
  /** How long the old holder had been silent, in ms. */
  silentForMs: number | null;
}

/** The newest takeovers (default at most 100) of `queue`, of one group or of all; newest first. */
export async function coopTakeovers(
  db: Queryable,
  queue: string,
  consumer?: string,
  limit = 100,
): Promise<CoopTakeover[]> {
  const op = 'coopTakeovers';
  requireName(queue, 'queue', op);
  if (consumer !== undefined) requireName(consumer, 'consumer', op);
  requireInteger(limit, 'limit', op, { min: 1, max: MAX_INT4 });
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    `select taken_at, queue_name, consumer_name, old_subconsumer, new_subconsumer,
            old_batch_id, new_batch_id, extract(epoch from silent_for) * 1000 as silent_for
       from pgque.get_coop_takeovers($1, $2, $3)`,
    [queue, consumer ?? null, limit],
  );
  return rows.map((row) => ({
    takenAt: asDate(row.taken_at),
    queueName: String(row.queue_name),
    consumerName: String(row.consumer_name),
    oldSubconsumer: String(row.old_subconsumer),
    newSubconsumer: String(row.new_subconsumer),
    oldBatchId: asBigIntOrNull(row.old_batch_id),
    newBatchId: asBigIntOrNull(row.new_batch_id),
    silentForMs: asNumberOrNull(row.silent_for),
  }));
}
