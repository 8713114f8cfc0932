import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool } from '../../src/db/pool.js';
import { getAchievement, listMissedTargets } from '../../src/services/achievement.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { ValidationError } from '../../src/services/errors.js';

const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };

/**
 * SLA achievement runs under a statement timeout of its own, as a ticket search does: a
 * figure that cannot be counted in time (here: kept waiting by a lock another session holds
 * on the outcomes) is cancelled by PostgreSQL and answered as a 400 on `start`, and the
 * connection goes back to the pool free.
 */
describe('SLA achievement under a statement timeout', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const ctx: ServiceContext = {
    pool,
    now: () => new Date('2026-03-06T15:00:00Z'),
    warningShare: 0.5,
    reportTimeoutMs: 300,
  };
  afterAll(async () => {
    await pool.end();
  });

  it('answers within the timeout as usual', async () => {
    expect((await getAchievement(ctx, admin, {})).targets).toBe(0);
  });

  it('a count past the timeout is cancelled and refused on start; the pool stays usable', async () => {
    const holder = await pool.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table stega.sla_outcomes in access exclusive mode');
      for (const read of [
        () => getAchievement(ctx, admin, {}),
        () => listMissedTargets(ctx, admin, { limit: 10 }),
      ]) {
        const error = await read().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).issues).toEqual([
          { path: 'start', message: expect.stringMatching(/took longer than 0.3 s to count/) },
        ]);
      }
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    expect((await getAchievement(ctx, admin, {})).targets).toBe(0);
    const { rows } = await pool.query('show statement_timeout');
    expect(rows[0]?.statement_timeout).toBe('0');
  });
});
