import { afterAll, describe, expect, it } from 'vitest';
import { RESEND_WINDOW_AFTER_MS } from '../chaos/faults.js';
import { alertsCheck, duplicateKeys, processesCheck } from './checks.js';
import {
  consumers,
  deliveryFigures,
  type FailoverRun,
  MEMBERS,
  runFailover,
  SLA_GROUP,
  writeFigures,
} from './scenario.js';

/**
 * Failover with synchronous replication: the primary is SIGKILLed under steady breaches,
 * the standby promoted, the service address pointed at it. Nothing acknowledged is lost:
 * every breach has its alert on every channel, a channel gets an alert twice only with
 * the same key and only for a delivery in flight at the kill, and every process carries on
 * without a restart. Figures: test-results/failover-sync.json.
 */
describe('failover, synchronous replication: kill the primary, promote the standby', async () => {
  const run: FailoverRun = await runFailover(true);
  afterAll(() => run.cleanup(), 60_000);
  const figures: Record<string, unknown> = { ...run.figures };

  it('lost no acknowledged commit', async () => {
    const { rows } = await run.pool.query(
      'select id from stega.tickets where id = any($1::bigint[])',
      [[...run.ackedTickets]],
    );
    expect(rows.length).toBe(run.ackedTickets.size);
    const breaches = await run.pool.query(
      'select id from stega.sla_breaches where id = any($1::bigint[])',
      [[...run.breachesSeenBeforeKill]],
    );
    figures.breachesSeenBeforeKillLost = run.breachesSeenBeforeKill.size - breaches.rows.length;
    expect(run.breachesSeenBeforeKill.size).toBeGreaterThan(0);
    expect(breaches.rows.length).toBe(run.breachesSeenBeforeKill.size);
  });

  it('every breach has its in-app alert, its email and its webhook; every due clock has its breach', async () => {
    Object.assign(figures, await alertsCheck(run));
  });

  it('sent an alert twice only with the same key, and only when it was in flight at the kill', () => {
    const { sameKey, otherKey, collisions } = duplicateKeys(run);
    expect(collisions).toEqual([]);
    // in flight: its send had begun at the kill (its pending row committed before it), so it
    // arrives by the promotion at the latest, give or take the receiver's own second; its
    // ledger row never committed, and the second copy comes from the redelivery on the new
    // primary
    for (const d of sameKey) {
      expect(d.times[0], d.key).toBeLessThanOrEqual(run.promotedAt + RESEND_WINDOW_AFTER_MS);
      expect(d.times[0], d.key).toBeGreaterThanOrEqual(run.killedAt - 5_000);
      expect(d.times[1], d.key).toBeGreaterThanOrEqual(run.promotedAt);
    }
    expect(otherKey).toEqual([]);
    figures.resentSameKey = sameKey.length;
  });

  it('every process came back by itself: same pids, leader ticking, members delivering and listening, jobs running', async () => {
    Object.assign(figures, await processesCheck(run));
  });

  it('records the figures', async () => {
    Object.assign(figures, await deliveryFigures(run));
    figures.members = (await consumers(run.pool))
      .filter((c) => c.name.startsWith(`${SLA_GROUP}.`))
      .map((c) => c.name);
    writeFigures('failover-sync', figures);
    expect(Object.keys(figures.firstDeliveryAfterKillByMember as object).sort()).toEqual(
      MEMBERS.map((m) => m).sort(),
    );
  });
});
