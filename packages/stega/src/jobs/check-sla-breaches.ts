import type pg from 'pg';
import { breachRecordDue, warningRecordDue } from '../db/breaches.js';
import { inTransaction } from '../db/pool.js';

/** How many alerts one transaction records and publishes at most. */
const CHUNK = 1000;

export interface SlaCheckResult {
  breaches: number;
  warnings: number;
}

/**
 * check_sla_breaches: publishes one ticket.sla_breached per clock past due, and one
 * ticket.sla_warning per clock past its warning share, each exactly once however many runs
 * overlap. Each chunk is one transaction holding the alert rows and their events.
 */
export async function checkSlaBreaches(pool: pg.Pool, now: Date): Promise<SlaCheckResult> {
  const breaches = await drain((tx) => breachRecordDue(tx, now, CHUNK), pool);
  const warnings = await drain((tx) => warningRecordDue(tx, now, CHUNK), pool);
  return { breaches, warnings };
}

async function drain(
  step: (tx: pg.PoolClient) => Promise<unknown[]>,
  pool: pg.Pool,
): Promise<number> {
  let total = 0;
  for (;;) {
    const recorded = await inTransaction(pool, step);
    total += recorded.length;
    if (recorded.length < CHUNK) return total;
  }
}
