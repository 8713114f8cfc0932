import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { APP_ROLES, appRolesGrant } from '../../src/db/app-roles.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.ts');
const PASSWORD = 'app-roles-test-password';

/**
 * The deployment's database roles (compose): each Stega process logs in as a role that is
 * neither the owner nor a superuser, and still does its work; what it has no business
 * doing is refused.
 */
describe('application database roles', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const owner = createPool(db.url, 2);
  await appRolesGrant(owner, PASSWORD);
  await appRolesGrant(owner, PASSWORD); // idempotent: every migrate re-applies it
  const urlAs = (role: string) => {
    const url = new URL(db.url);
    url.username = role;
    url.password = PASSWORD;
    return url.toString();
  };
  const children: ChildProcess[] = [];
  const clients: pg.Client[] = [];
  const as = async (role: string) => {
    const client = new pg.Client({ connectionString: urlAs(role) });
    await client.connect();
    clients.push(client);
    return client;
  };
  const refused = (client: pg.Client, sql: string) =>
    client.query(sql).then(
      () => 'allowed',
      (error: { code?: string }) => error.code,
    );
  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(clients.map((client) => client.end()));
    await owner.end();
  });

  it('are login roles without superuser, createrole or createdb', async () => {
    const { rows } = await owner.query(
      `select rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin
         from pg_roles where rolname = any($1) order by rolname`,
      [Object.values(APP_ROLES)],
    );
    expect(rows).toEqual(
      Object.values(APP_ROLES)
        .sort()
        .map((rolname) => ({
          rolname,
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolcanlogin: true,
        })),
    );
  });

  it('stega web works as stega_web: tickets, queue status, a report job', async () => {
    const web = await startStega(['web'], { DATABASE_URL: urlAs(APP_ROLES.web) });
    try {
      const ticket = await web.api('POST', '/api/tickets', {
        subject: 'As the web role',
        requester_name: 'Requester',
        requester_email: 'req@roles.test',
        priority: 'high',
      });
      if (ticket.status !== 201) {
        await web.stop();
        throw new Error(`ticket refused (${ticket.status}):\n${web.output().slice(-3000)}`);
      }
      expect((await web.api('GET', `/api/queues/${NOTIFICATIONS_QUEUE}`)).status).toBe(200);
      expect((await web.api('GET', '/api/job-runs')).status).toBe(200);
    } finally {
      await web.stop();
    }
    const client = await as(APP_ROLES.web);
    expect(await refused(client, "select graphile_worker.add_job('check_sla_breaches')")).toBe(
      'allowed',
    );
    expect(await refused(client, 'create table stega.intruder (id int)')).toBe('42501');
    expect(await refused(client, `select pgque.ticker('${NOTIFICATIONS_QUEUE}')`)).toBe('42501');
  });

  /** `stega <command>` as a real process, logging at warn to the test's stderr. */
  const spawnAs = (command: string, role: string, env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, command], {
      env: { ...process.env, DATABASE_URL: urlAs(role), LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  };

  it('stega jobs runs the deadline job as stega_web', async () => {
    spawnAs('jobs', APP_ROLES.web);
    await expect
      .poll(
        async () => {
          const { rows } = await owner.query(
            `select count(*)::int as n from stega.pipeline_log
              where kind = 'job_run' and details->>'task' = 'check_sla_breaches'
                and details->>'error' is null`,
          );
          return rows[0].n > 0;
        },
        { timeout: 60_000, interval: 250 },
      )
      .toBe(true);
  });

  it('an sla-breach-worker joins its group as stega_worker, which cannot publish', async () => {
    spawnAs('sla-breach-worker', APP_ROLES.worker, { SUBCONSUMER_NAME: 'roles-worker' });
    await expect
      .poll(
        async () => {
          const { rows } = await owner.query(
            'select count(*)::int as n from pgque.get_consumer_info($1, $2)',
            [NOTIFICATIONS_QUEUE, `${SLA_GROUP}.roles-worker`],
          );
          return rows[0].n;
        },
        { timeout: 60_000, interval: 250 },
      )
      .toBe(1);
    const client = await as(APP_ROLES.worker);
    expect(await refused(client, 'select count(*) from stega.tickets')).toBe('allowed');
    expect(
      await refused(client, `select pgque.send('${NOTIFICATIONS_QUEUE}', 'x', '{}'::jsonb)`),
    ).toBe('42501');
    expect(await refused(client, 'select count(*) from graphile_worker.jobs')).toBe('42501');
  });

  it('the ticker ticks as stega_ticker, which reads none of the helpdesk', async () => {
    const before = await owner.query('select max(tick_id) as id from pgque.tick');
    await owner.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    spawnAs('ticker', APP_ROLES.ticker);
    await expect
      .poll(
        async () => {
          const { rows } = await owner.query('select max(tick_id) as id from pgque.tick');
          return Number(rows[0].id) > Number(before.rows[0].id);
        },
        { timeout: 60_000, interval: 250 },
      )
      .toBe(true);
    const client = await as(APP_ROLES.ticker);
    expect(await refused(client, `select pgque.ticker('${NOTIFICATIONS_QUEUE}')`)).toBe('allowed');
    expect(await refused(client, 'select count(*) from stega.tickets')).toBe('42501');
  });
});
