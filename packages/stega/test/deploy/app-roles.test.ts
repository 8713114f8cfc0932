import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { APP_ROLES, type AppRole, appRolesGrant, ENGINE_STATUS } from '../../src/db/app-roles.js';
import { MAIL_QUEUE, NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { startTicker } from '../../src/processes/ticker.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { startStega } from '../e2e/stega-process.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.ts');
/** Each role its own password. */
const PASSWORDS: Record<AppRole, string> = {
  web: 'web-role-test-password',
  mail: 'mail-role-test-password',
  worker: 'worker-role-test-password',
  ticker: 'ticker-role-test-password',
};
const roleKey = (role: string) =>
  (Object.keys(APP_ROLES) as AppRole[]).find((key) => APP_ROLES[key] === role) as AppRole;

/**
 * The deployment's database roles (compose): each Stega process logs in as a role that is
 * neither the owner nor a superuser, and still does its work; what it has no business
 * doing is refused.
 */
describe('application database roles', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const owner = createPool(db.url, 2);
  await appRolesGrant(owner, PASSWORDS);
  // as a migrate before issue 24 left it: stega_web a member of pgque_reader
  await owner.query('grant pgque_reader to stega_web');
  await appRolesGrant(owner, PASSWORDS); // idempotent: every migrate re-applies it
  const urlAs = (role: string) => {
    const url = new URL(db.url);
    url.username = role;
    url.password = PASSWORDS[roleKey(role)];
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

  it('never sends the password in SQL: the role statements carry its SCRAM verifier, which logs in', async () => {
    const texts: string[] = [];
    const recording = createPool(db.url, 1);
    const client = await recording.connect();
    const query = client.query.bind(client);
    client.query = ((text: string | { text: string }, ...rest: unknown[]) => {
      texts.push(typeof text === 'string' ? text : text.text);
      return (query as (...args: unknown[]) => unknown)(text, ...rest);
    }) as typeof client.query;
    client.release();
    try {
      await appRolesGrant(recording, PASSWORDS);
    } finally {
      await recording.end();
    }
    for (const password of Object.values(PASSWORDS)) {
      expect(texts.filter((text) => text.includes(password))).toEqual([]);
    }
    const roleStatements = texts.filter((text) => /^(create|alter) role /.test(text));
    expect(roleStatements).toHaveLength(Object.values(APP_ROLES).length);
    for (const text of roleStatements) {
      expect(text).toMatch(
        / password 'SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+'$/,
      );
    }
    // the server checks passwords (scram-sha-256 in pg_hba): the right one logs in, a wrong one not
    expect((await (await as(APP_ROLES.worker)).query('select 1 as one')).rows).toEqual([
      { one: 1 },
    ]);
    const wrong = new URL(urlAs(APP_ROLES.worker));
    wrong.password = `${PASSWORDS.worker}x`;
    const refusedLogin = new pg.Client({ connectionString: wrong.toString() });
    await expect(refusedLogin.connect()).rejects.toMatchObject({ code: '28P01' });
    await refusedLogin.end().catch(() => {});
  });

  it("gives each role its own password: one role's does not log in as another", async () => {
    for (const role of Object.keys(APP_ROLES) as AppRole[]) {
      const other = role === 'web' ? 'worker' : 'web';
      const url = new URL(urlAs(APP_ROLES[role]));
      url.password = PASSWORDS[other];
      const client = new pg.Client({ connectionString: url.toString() });
      await expect(client.connect(), role).rejects.toMatchObject({ code: '28P01' });
      await client.end().catch(() => {});
    }
  });

  it('stega_web may read the engine status but call none of its consumer functions', async () => {
    // every function pgque_reader may call, but the status ones, is out of stega_web's reach
    const { rows } = await owner.query<{ fn: string; web: boolean }>(
      `select p.oid::regprocedure::text as fn,
              has_function_privilege('stega_web', p.oid, 'execute') as web
         from pg_proc p
        where p.pronamespace = 'pgque'::regnamespace
          and has_function_privilege('pgque_reader', p.oid, 'execute')
          and p.oid <> all ($1::regprocedure[])`,
      [ENGINE_STATUS.map((fn) => fn.replace('int)', 'integer)'))],
    );
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((row) => row.web).map((row) => row.fn)).toEqual([]);
    const { rows: member } = await owner.query(
      "select pg_has_role('stega_web', 'pgque_reader', 'member') as reader",
    );
    expect(member).toEqual([{ reader: false }]);
    // and a real connection as stega_web is refused them
    const web = await as(APP_ROLES.web);
    for (const sql of [
      `select pgque.register_consumer('${NOTIFICATIONS_QUEUE}', 'intruder')`,
      `select * from pgque.next_batch('${NOTIFICATIONS_QUEUE}', '${SLA_GROUP}')`,
      `select * from pgque.receive('${NOTIFICATIONS_QUEUE}', '${SLA_GROUP}', 10)`,
      'select pgque.finish_batch(1)',
      'select pgque.ack(1)',
      `select pgque.unregister_consumer('${NOTIFICATIONS_QUEUE}', '${SLA_GROUP}')`,
      `select * from pgque.receive_partitioned('${MAIL_QUEUE}', 'mail_filing', 0, 1, 'w', 10)`,
    ]) {
      expect(await refused(web, sql), sql).toBe('42501');
    }
    for (const sql of [
      'select count(*) from pgque.get_queue_info()',
      `select count(*) from pgque.get_consumer_info('${NOTIFICATIONS_QUEUE}')`,
      `select count(*) from pgque.dlq_inspect('${NOTIFICATIONS_QUEUE}', 10)`,
    ]) {
      expect(await refused(web, sql), sql).toBe('allowed');
    }
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
      expect((await web.api('GET', `/api/queues/${NOTIFICATIONS_QUEUE}/dead-letters`)).status).toBe(
        200,
      );
      expect(
        (
          await web.api(
            'GET',
            `/api/queues/${NOTIFICATIONS_QUEUE}/consumers/${SLA_GROUP}/takeovers`,
          )
        ).status,
      ).toBe(200);
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

  it('stega mail-in takes mail in and files it as stega_mail (send_idem, the filing slots)', async () => {
    await createMailbox(
      { pool: owner, now: () => new Date(), warningShare: 0.8 },
      { address: 'support@roles.test', display_name: 'Roles Support' },
    );
    const ticker = await startTicker(db.url, createLogger('silent', 'test'));
    try {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as net.AddressInfo).port;
      await new Promise((resolve) => server.close(resolve));
      spawnAs('mail-in', APP_ROLES.mail, { INBOUND_SMTP_PORT: String(port), HOST: '127.0.0.1' });
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true });
      const message = {
        envelope: { from: 'rui@customer.test', to: ['support@roles.test'] },
        raw: [
          'From: Rui <rui@customer.test>',
          'To: support@roles.test',
          'Subject: As the mail role',
          'Message-ID: <roles@customer.test>',
          '',
          'Filed by a mail-in logged in as stega_mail.',
          '',
        ].join('\r\n'),
      };
      try {
        await expect
          .poll(() => transport.sendMail(message).then((info) => info.response, String), {
            timeout: 60_000,
            interval: 250,
          })
          .toMatch(/^250 /);
      } finally {
        transport.close();
      }
      await expect
        .poll(
          async () =>
            (
              await owner.query(
                `select state from stega.inbound_mail where message_key = 'roles@customer.test'`,
              )
            ).rows[0]?.state,
          { timeout: 60_000, interval: 250 },
        )
        .toBe('filed');
    } finally {
      await ticker.stop();
    }
  });
});
