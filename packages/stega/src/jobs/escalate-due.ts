import type pg from 'pg';
import { escalationFireDue } from '../db/escalations.js';
import { inRetriedTransaction } from '../db/pool.js';

/** How many chains one transaction handles at most. */
const CHUNK = 200;

/**
 * The escalation step of check_sla_breaches: fires every level due at `now` (a chain
 * behind by several levels, after downtime, fires each of them, one per round), each
 * round one transaction. Returns how many levels fired.
 */
export async function escalateDue(pool: pg.Pool, now: Date): Promise<number> {
  let fired = 0;
  for (;;) {
    const round = await inRetriedTransaction(pool, (tx) => escalationFireDue(tx, now, CHUNK));
    fired += round.fired.length;
    if (round.chains === 0) return fired;
  }
}
