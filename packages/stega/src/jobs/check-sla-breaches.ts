import type pg from 'pg';
import { type BreachCursor, breachRecordDue, warningRecordDue } from '../db/breaches.js';
import { escalationFireDue, escalationStartForBreaches } from '../db/escalations.js';
import { inTransaction } from '../db/pool.js';
import { escalateDue } from './escalate-due.js';

/** How many alerts one transaction records and publishes at most. */
const CHUNK = 1000;

export interface SlaCheckResult {
  breaches: number;
  warnings: number;
  /** Escalation levels fired (issue 14). */
  escalations: number;
}

/**
 * check_sla_breaches: publishes one ticket.sla_breached per clock past due, and one
 * ticket.sla_warning per clock past its warning share, each exactly once however many runs
 * overlap. Each chunk is one transaction holding the alert rows and their events.
 */
export async function checkSlaBreaches(pool: pg.Pool, now: Date): Promise<SlaCheckResult> {
  let cursor: BreachCursor | undefined;
  let firedWithBreaches = 0;
  const breaches = await drain(async (tx) => {
    const recorded = await breachRecordDue(tx, now, CHUNK, cursor);
    // a breach of a policy with an escalation policy starts its chain in the same transaction,
    // and a first level due at once (delay 0: the breach's page) fires in it too, so the page
    // commits with its breach instead of after every chunk of the run
    const started = await escalationStartForBreaches(
      tx,
      recorded.map((b) => b.id),
      now,
    );
    if (started > 0) firedWithBreaches += (await escalationFireDue(tx, now, CHUNK)).fired.length;
    // the next chunk starts past this one's last clock (a chunk that fails ends the run)
    cursor = recorded.at(-1)?.cursor ?? cursor;
    return recorded;
  }, pool);
  const warnings = await drain((tx) => warningRecordDue(tx, now, CHUNK), pool);
  const escalations = firedWithBreaches + (await escalateDue(pool, now));
  return { breaches, warnings, escalations };
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
