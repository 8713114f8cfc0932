import type pg from 'pg';

/**
 * The database roles Stega's processes log in as in a deployment, so that none of them is
 * the owner or a superuser. `stega migrate`, run with the owner's credentials, creates them
 * (LOGIN, NOSUPERUSER, one password) and re-applies their grants after every migration, so
 * the grants always match this file and cover tables added since.
 *
 * - stega_web: `stega web` and `stega jobs`. Writes Stega's tables, publishes events
 *   (pgque_writer: send, dlq_replay), reads queue status for the operations page
 *   (pgque_reader: get_queue_info, get_consumer_info, dlq_inspect, get_coop_takeovers), and
 *   queues and runs graphile-worker jobs.
 * - stega_worker: `stega notification-worker` and `stega sla-breach-worker`. Consumes
 *   (pgque_reader) and writes Stega's tables (deliveries, in-app alerts); cannot publish.
 * - stega_ticker: `stega ticker`. pgque_admin (ticks every queue); none of Stega's tables.
 */
export const APP_ROLES = {
  web: 'stega_web',
  worker: 'stega_worker',
  ticker: 'stega_ticker',
} as const;

const ENGINE_ROLES: Record<string, string[]> = {
  [APP_ROLES.web]: ['pgque_writer', 'pgque_reader'],
  [APP_ROLES.worker]: ['pgque_reader'],
  [APP_ROLES.ticker]: ['pgque_admin'],
};

/** Creates or updates the login roles and grants them what their processes call. */
export async function appRolesGrant(pool: pg.Pool, password: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    // roles are cluster-wide: one migrate at a time, whatever the database
    await client.query("select pg_advisory_xact_lock(hashtext('stega.app_roles'))");
    const { rows } = await client.query<{ db: string }>('select current_database() as db');
    const database = client.escapeIdentifier(rows[0]?.db ?? '');
    for (const [role, engineRoles] of Object.entries(ENGINE_ROLES)) {
      const name = client.escapeIdentifier(role);
      const exists = await client.query('select 1 from pg_catalog.pg_roles where rolname = $1', [
        role,
      ]);
      await client.query(
        `${exists.rowCount ? 'alter' : 'create'} role ${name} with login inherit nosuperuser nocreatedb nocreaterole password ${client.escapeLiteral(password)}`,
      );
      await client.query(`grant connect on database ${database} to ${name}`);
      for (const engineRole of engineRoles) {
        await client.query(`grant ${client.escapeIdentifier(engineRole)} to ${name}`);
      }
    }
    for (const role of [APP_ROLES.web, APP_ROLES.worker]) {
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
    // graphile-worker: the web queues jobs (add_job) and lists them; the jobs runner runs them
    const web = client.escapeIdentifier(APP_ROLES.web);
    await client.query(`grant usage on schema graphile_worker to ${web}`);
    await client.query(
      `grant select, insert, update, delete on all tables in schema graphile_worker to ${web}`,
    );
    await client.query(
      `grant usage, select, update on all sequences in schema graphile_worker to ${web}`,
    );
    await client.query(`grant execute on all functions in schema graphile_worker to ${web}`);
    // graphile-worker turns row-level security on for its private tables (no policy: only
    // the owner passes); the web role gets a policy that lets it through
    const secured = await client.query<{ name: string }>(
      `select c.relname as name
         from pg_catalog.pg_class c
        where c.relnamespace = 'graphile_worker'::regnamespace and c.relkind = 'r'
          and c.relrowsecurity
          and not exists (select 1 from pg_catalog.pg_policies p
                           where p.schemaname = 'graphile_worker' and p.tablename = c.relname
                             and p.policyname = 'stega_web')`,
    );
    for (const { name } of secured.rows) {
      await client.query(
        `create policy stega_web on graphile_worker.${client.escapeIdentifier(name)} to ${web} using (true) with check (true)`,
      );
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
