import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool } from '../../src/db/pool.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { ValidationError } from '../../src/services/errors.js';
import { listTickets } from '../../src/services/ticket-views.js';
import { createTicket } from '../../src/services/tickets.js';

const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };

/**
 * A ticket search runs under a statement timeout of its own: a search that cannot finish in
 * time (here: one kept waiting by a lock another session holds on the tickets) is cancelled
 * by PostgreSQL and answered as a 400 on `q`, and the connection goes back to the pool free.
 */
describe('ticket search under a statement timeout', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const ctx: ServiceContext = {
    pool,
    now: () => new Date('2026-03-06T15:00:00Z'),
    warningShare: 0.5,
    searchTimeoutMs: 300,
  };
  afterAll(async () => {
    await pool.end();
  });
  await createTicket(ctx, admin, {
    subject: 'Printer on fire',
    requester_name: 'Rui',
    requester_email: 'rui@example.test',
    priority: 'normal',
  });
  const search = (q: string) => listTickets(ctx, admin, { q, limit: 20, offset: 0 });

  it('answers within the timeout as usual', async () => {
    const page = await search('printer');
    expect(page.items.map((t) => t.subject)).toEqual(['Printer on fire']);
  });

  it('a search past the timeout is cancelled and refused on q; the pool stays usable', async () => {
    const holder = await pool.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table stega.tickets in access exclusive mode');
      const error = await search('printer').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toMatch(/q/);
      expect(JSON.stringify(error)).toContain('took longer than 0.3 s to search');
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    // the cancelled transaction left nothing behind: the same search now answers
    expect((await search('printer')).items).toHaveLength(1);
    // and a plain list does not carry the search's timeout
    const { rows } = await pool.query('show statement_timeout');
    expect(rows[0]?.statement_timeout).toBe('0');
  });
});
