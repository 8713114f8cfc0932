import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { STATUS_FUNCTIONS } from '@stega/pgque';
import type pg from 'pg';

/**
 * The database roles Stega's processes log in as in a deployment, so that none of them is
 * the owner or a superuser. `stega migrate`, run with the owner's credentials, creates them
 * (LOGIN, NOSUPERUSER, each with its own password) and re-applies their grants after every
 * migration, so the grants always match this file and cover tables added since. A password
 * never travels in SQL: the statement carries its SCRAM-SHA-256 verifier, computed here (a
 * server logging statements, or pg_stat_statements, keeps no password).
 *
 * - stega_web: `stega web` and `stega jobs`. Writes Stega's tables, publishes events
 *   (pgque_writer: send, dlq_replay), reads queue status for the operations page and the
 *   metrics (execute on ENGINE_STATUS only: it can neither register, move nor finish a
 *   consumer's batches), and queues and runs graphile-worker jobs.
 * - stega_mail: `stega mail-in`. Writes Stega's tables, publishes mail.received
 *   (pgque_writer: send_idem), consumes the mail queue as the partitioned consumer
 *   mail_filing (pgque_reader), and queues graphile-worker jobs as it files.
 * - stega_worker: `stega notification-worker` and `stega sla-breach-worker`. Consumes
 *   (pgque_reader) and writes Stega's tables (deliveries, in-app alerts); cannot publish.
 * - stega_ticker: `stega ticker`. pgque_admin (ticks every queue); none of Stega's tables.
 */
export const APP_ROLES = {
  web: 'stega_web',
  mail: 'stega_mail',
  worker: 'stega_worker',
  ticker: 'stega_ticker',
} as const;

/** Which of the roles: `web`, `mail`, `worker` or `ticker`. */
export type AppRole = keyof typeof APP_ROLES;

/** Each role's login password; a role without one is left as it is (not created). */
export type AppRolePasswords = Partial<Record<AppRole, string>>;

const ENGINE_ROLES: Record<AppRole, string[]> = {
  web: ['pgque_writer'],
  mail: ['pgque_writer', 'pgque_reader'],
  worker: ['pgque_reader'],
  ticker: ['pgque_admin'],
};
const ALL_ENGINE_ROLES = ['pgque_reader', 'pgque_writer', 'pgque_admin'];

/**
 * The engine's read-only status functions stega_web calls for the operations page, the
 * pipeline page and /metrics, granted one by one instead of pgque_reader (the engine keeps
 * the list: STATUS_FUNCTIONS).
 */
export const ENGINE_STATUS = STATUS_FUNCTIONS;

/** PostgreSQL's default SCRAM iteration count (scram_iterations). */
const SCRAM_ITERATIONS = 4096;

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802, RFC 7677):
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, base64. Given to `password`
 * in CREATE/ALTER ROLE, the server stores it as it is. The password is used as given (no
 * SASLprep), as node-postgres sends it; the deployment's passwords are URL-safe ASCII,
 * which SASLprep leaves unchanged anyway.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16)): string {
  const salted = pbkdf2Sync(password, salt, SCRAM_ITERATIONS, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${SCRAM_ITERATIONS}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * Creates or updates the login roles that have a password in `passwords` and grants them
 * what their processes call (taking back engine roles this file no longer gives them).
 */
export async function appRolesGrant(pool: pg.Pool, passwords: AppRolePasswords): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    // roles are cluster-wide: one migrate at a time, whatever the database
    await client.query("select pg_advisory_xact_lock(hashtext('stega.app_roles'))");
    const { rows } = await client.query<{ db: string }>('select current_database() as db');
    const database = client.escapeIdentifier(rows[0]?.db ?? '');
    const managed = (Object.keys(APP_ROLES) as AppRole[]).filter(
      (role) => passwords[role] !== undefined,
    );
    for (const role of managed) {
      const name = client.escapeIdentifier(APP_ROLES[role]);
      const exists = await client.query('select 1 from pg_catalog.pg_roles where rolname = $1', [
        APP_ROLES[role],
      ]);
      await client.query(
        `${exists.rowCount ? 'alter' : 'create'} role ${name} with login inherit nosuperuser nocreatedb nocreaterole password ${client.escapeLiteral(scramVerifier(passwords[role] as string))}`,
      );
      await client.query(`grant connect on database ${database} to ${name}`);
      for (const engineRole of ALL_ENGINE_ROLES) {
        const verb = ENGINE_ROLES[role].includes(engineRole) ? 'grant' : 'revoke';
        await client.query(
          `${verb} ${client.escapeIdentifier(engineRole)} ${verb === 'grant' ? 'to' : 'from'} ${name}`,
        );
      }
    }
    const stegaWriters = managed.filter((role) => role !== 'ticker').map((role) => APP_ROLES[role]);
    for (const role of stegaWriters) {
      const name = client.escapeIdentifier(role);
      await client.query(`grant usage on schema stega to ${name}`);
      await client.query(
        `grant select, insert, update, delete on all tables in schema stega to ${name}`,
      );
      await client.query(`grant usage, select, update on all sequences in schema stega to ${name}`);
      await client.query(`grant execute on all functions in schema stega to ${name}`);
      // the migrations' bookkeeping is the owner's
      await client.query(`revoke insert, update, delete on stega.schema_migration from ${name}`);
    }
    if (managed.includes('web')) {
      // the engine's status, read-only; none of its consumer functions
      await client.query(
        `grant execute on function ${ENGINE_STATUS.join(', ')} to ${client.escapeIdentifier(APP_ROLES.web)}`,
      );
    }
    // graphile-worker: the web and mail-in queue jobs (add_job); the web lists them; the jobs
    // runner (as stega_web) runs them
    for (const role of managed.filter((key) => key === 'web' || key === 'mail')) {
      const name = client.escapeIdentifier(APP_ROLES[role]);
      await client.query(`grant usage on schema graphile_worker to ${name}`);
      await client.query(
        `grant select, insert, update, delete on all tables in schema graphile_worker to ${name}`,
      );
      await client.query(
        `grant usage, select, update on all sequences in schema graphile_worker to ${name}`,
      );
      await client.query(`grant execute on all functions in schema graphile_worker to ${name}`);
      // graphile-worker turns row-level security on for its private tables (no policy: only
      // the owner passes); the role gets a policy of its name that lets it through
      const secured = await client.query<{ name: string }>(
        `select c.relname as name
           from pg_catalog.pg_class c
          where c.relnamespace = 'graphile_worker'::regnamespace and c.relkind = 'r'
            and c.relrowsecurity
            and not exists (select 1 from pg_catalog.pg_policies p
                             where p.schemaname = 'graphile_worker' and p.tablename = c.relname
                               and p.policyname = $1)`,
        [APP_ROLES[role]],
      );
      for (const table of secured.rows) {
        await client.query(
          `create policy ${name} on graphile_worker.${client.escapeIdentifier(table.name)} to ${name} using (true) with check (true)`,
        );
      }
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
