import { createQueue, install, setConsumerConfig, subscribe } from '@stega/pgque';
import { runMigrations } from 'graphile-worker';
import type pg from 'pg';
import { migrations } from './generated/migrations.js';
import { seedDefaults } from './seed.js';

/** The queue every Stega event goes through, and its two consumers. */
export const NOTIFICATIONS_QUEUE = 'stega.notifications';
export const NOTIFICATION_CONSUMER = 'notification_worker';
export const SLA_GROUP = 'sla_breach_dispatcher';

/**
 * Brings a database up to date: the queue engine, graphile-worker's schema, Stega's tables,
 * the notifications queue with its consumers, and default SLA policies on a fresh database. Idempotent; safe to run from several
 * processes at once.
 */
export async function migrate(
  pool: pg.Pool,
  options: { coopPageSize: number; seedDefaults?: boolean },
): Promise<void> {
  await install(pool);
  await runMigrations({ pgPool: pool, logger: undefined });
  await applyAppMigrations(pool);
  await ensureNotificationsQueue(pool, options.coopPageSize);
  if (options.seedDefaults ?? true) await seedDefaults(pool, new Date());
}

async function applyAppMigrations(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select pg_advisory_xact_lock(hashtext('stega.migrate'))");
    await client.query('create schema if not exists stega');
    await client.query(
      'create table if not exists stega.schema_migration (id int primary key, name text not null, applied_at timestamptz not null default now())',
    );
    const { rows } = await client.query<{ id: number }>('select id from stega.schema_migration');
    const applied = new Set(rows.map((row) => Number(row.id)));
    for (const migration of migrations) {
      if (applied.has(migration.id)) continue;
      await client.query(migration.sql);
      await client.query('insert into stega.schema_migration (id, name) values ($1, $2)', [
        migration.id,
        migration.name,
      ]);
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Creates the queue and subscribes both consumers before any event is published, so none
 * is missed however late a worker starts. The cooperative group starts as a normal
 * subscription that the first sla-breach-worker converts; when the last member leaves it
 * turns back into a normal subscription and keeps its place in the queue.
 */
async function ensureNotificationsQueue(pool: pg.Pool, coopPageSize: number): Promise<void> {
  await createQueue(pool, NOTIFICATIONS_QUEUE, {
    tickerMaxLag: '100 milliseconds',
    tickerIdlePeriod: '10 seconds',
  });
  await subscribe(pool, NOTIFICATIONS_QUEUE, NOTIFICATION_CONSUMER);
  await subscribe(pool, NOTIFICATIONS_QUEUE, SLA_GROUP);
  // One detector run publishes all its breaches in one transaction, hence one window:
  // paging spreads such a window over every sla-breach-worker instead of one.
  await setConsumerConfig(pool, NOTIFICATIONS_QUEUE, SLA_GROUP, {
    coopPageSize: coopPageSize > 0 ? coopPageSize : null,
  });
}
