import type pg from 'pg';
import { type BreachCursor, breachRecordChunk, warningRecordChunk } from '../db/breaches.js';
import { escalationFireDue, escalationStartForBreaches } from '../db/escalations.js';
import { inRetriedTransaction } from '../db/pool.js';
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
  let after: BreachCursor | undefined;
  let breaches = 0;
  let firedWithBreaches = 0;
  // each chunk's transaction may lose a deadlock to a ticket write and run again, so it
  // changes nothing here until it has committed
  for (;;) {
    const chunk = await inRetriedTransaction(pool, async (tx) => {
      const { recorded, next } = await breachRecordChunk(tx, now, CHUNK, after);
      // a breach of a policy with an escalation policy starts its chain in the same
      // transaction, and a first level due at once (delay 0: the breach's page) fires in it
      // too, so the page commits with its breach instead of after every chunk of the run
      const started = await escalationStartForBreaches(
        tx,
        recorded.map((b) => b.id),
        now,
      );
      const fired = started > 0 ? (await escalationFireDue(tx, now, CHUNK)).fired.length : 0;
      return { recorded: recorded.length, next, fired };
    });
    breaches += chunk.recorded;
    firedWithBreaches += chunk.fired;
    if (!chunk.next) break;
    after = chunk.next;
  }
  let warnings = 0;
  for (;;) {
    const chunk = await inRetriedTransaction(pool, (tx) => warningRecordChunk(tx, now, CHUNK));
    warnings += chunk.recorded.length;
    if (!chunk.more) break;
  }
  const escalations = firedWithBreaches + (await escalateDue(pool, now));
  return { breaches, warnings, escalations };
}
