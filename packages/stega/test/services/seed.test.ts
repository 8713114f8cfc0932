import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { ADMIN_TOKEN_MIN_LENGTH } from '../../src/config.js';
import { createPool } from '../../src/db/pool.js';
import { seedDefaults } from '../../src/db/seed.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { createLogger } from '../../src/log.js';
import { resolveAdminToken } from '../../src/services/admin-token.js';
import { DEMO_ORG, seedDemo } from '../../src/services/demo.js';

describe('seeding', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const now = new Date('2026-03-02T09:00:00Z');

  it('seeds a 24x7 calendar and one policy per priority once, even from two pools at once', async () => {
    // the template was migrated, which seeds; start from an unseeded database
    await db.pool.query('delete from stega.sla_policies; delete from stega.calendars');
    const a = createPool(db.url, 2);
    const b = createPool(db.url, 2);
    try {
      const results = await Promise.all([seedDefaults(a, now), seedDefaults(b, now)]);
      expect(results.sort()).toEqual([false, true]);
      expect(await seedDefaults(a, now)).toBe(false);
    } finally {
      await a.end();
      await b.end();
    }
    const policies = await db.pool.query(
      `select p.priority, p.first_response_minutes, p.resolution_minutes, p.alert_channels, c.always_open
         from stega.sla_policies p join stega.calendars c on c.id = p.calendar_id
        order by p.first_response_minutes`,
    );
    expect(policies.rows).toEqual([
      {
        priority: 'urgent',
        first_response_minutes: 15,
        resolution_minutes: 120,
        alert_channels: { in_app: true },
        always_open: true,
      },
      {
        priority: 'high',
        first_response_minutes: 60,
        resolution_minutes: 480,
        alert_channels: { in_app: true },
        always_open: true,
      },
      {
        priority: 'normal',
        first_response_minutes: 240,
        resolution_minutes: 1440,
        alert_channels: { in_app: true },
        always_open: true,
      },
      {
        priority: 'low',
        first_response_minutes: 480,
        resolution_minutes: 2880,
        alert_channels: { in_app: true },
        always_open: true,
      },
    ]);
    const calendars = await db.pool.query('select count(*)::int as n from stega.calendars');
    expect(calendars.rows[0]?.n).toBe(1);
  });

  it('seeds demo tickets whose first-response SLAs breach within the first minute', async () => {
    const pool = createPool(db.url, 3);
    try {
      const ids = await seedDemo(pool, now, {
        warningShare: 0.8,
        webhook: { url: 'http://127.0.0.1:9/hook', secret: 'demo-secret-0123456789' },
      });
      expect(ids).toHaveLength(6);
      const clocks = await pool.query(
        `select c.kind, max(c.due_at) as latest, min(c.due_at) as earliest, count(*)::int as n
           from stega.sla_clocks c where c.ticket_id = any ($1) group by c.kind order by c.kind`,
        [ids],
      );
      const [first, resolution] = clocks.rows;
      expect(first?.n).toBe(6);
      expect(first?.earliest.getTime()).toBeGreaterThan(now.getTime());
      expect(first?.latest.getTime()).toBeLessThanOrEqual(now.getTime() + 60_000);
      expect(resolution?.latest.getTime()).toBeLessThanOrEqual(now.getTime() + 120_000);

      const policies = await pool.query(
        'select alert_channels from stega.sla_policies where requester_org = $1',
        [DEMO_ORG],
      );
      expect(policies.rows).toHaveLength(4);
      expect(policies.rows[0]?.alert_channels).toMatchObject({
        in_app: true,
        email: expect.arrayContaining(['ana.lima@demo.stega.test']),
        webhooks: [{ url: 'http://127.0.0.1:9/hook', secret: 'demo-secret-0123456789' }],
      });

      const detected = await checkSlaBreaches(pool, new Date(now.getTime() + 60_000));
      expect(detected.breaches).toBe(6);

      // a second run reuses agents, calendar and policies, and adds six fresh tickets
      const more = await seedDemo(pool, new Date(now.getTime() + 300_000));
      expect(more).toHaveLength(6);
      const agents = await pool.query('select count(*)::int as n from stega.agents');
      expect(agents.rows[0]?.n).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it('keeps the admin token of an unconfigured instance in the data directory, private', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'stega-token-'));
    const logger = createLogger('silent', 'test');
    const first = await resolveAdminToken({ adminToken: undefined, dataDir }, logger);
    expect(first).toMatch(/^stg_.{40,}$/);
    expect(first.length).toBeGreaterThanOrEqual(ADMIN_TOKEN_MIN_LENGTH); // what STEGA_ADMIN_TOKEN must have
    const file = path.join(dataDir, 'admin-token');
    expect((await readFile(file, 'utf8')).trim()).toBe(first);
    expect((await stat(file)).mode & 0o077).toBe(0);
    expect(await resolveAdminToken({ adminToken: undefined, dataDir }, logger)).toBe(first);
    expect(await resolveAdminToken({ adminToken: 'configured-token', dataDir }, logger)).toBe(
      'configured-token',
    );
    // a hand-written file with a short token is refused, not used
    const other = await mkdtemp(path.join(os.tmpdir(), 'stega-token-'));
    await writeFile(path.join(other, 'admin-token'), 'short-token\n', { mode: 0o600 });
    await expect(
      resolveAdminToken({ adminToken: undefined, dataDir: other }, logger),
    ).rejects.toThrow(/holds an admin token of 11 characters, fewer than 32: delete the file/);
  });
});
