import {
  consumerInfo,
  createQueue,
  install,
  send,
  setConsumerConfig,
  subscribe,
  subscribePartitioned,
  unsubscribe,
  unsubscribeSubconsumer,
} from '@stega/pgque';
import { runMigrations } from 'graphile-worker';
import type pg from 'pg';
import { functions, migrations } from './generated/sql.js';
import { inboundMailReceivedIds } from './inbound-mail.js';
import { inTransaction } from './pool.js';
import { seedDefaults } from './seed.js';

/** The queue every Stega event goes through, and its two consumers. */
export const NOTIFICATIONS_QUEUE = 'stega.notifications';
export const NOTIFICATION_CONSUMER = 'notification_worker';
export const SLA_GROUP = 'sla_breach_dispatcher';

/**
 * The queue received mail goes through (issue 23), apart from stega.notifications so that
 * alert delivery never waits behind a burst of mail, and its partitioned consumer (issue
 * 26): MAIL_FILING_SLOTS slots shared by the live mail-in processes, each `mail.received`
 * filed by the holder of its conversation's slot, one message of a slot at a time.
 */
export const MAIL_QUEUE = 'stega.mail';
export const MAIL_FILING_CONSUMER = 'mail_filing';
/**
 * The filing slots: at most this many messages are filed at once, whatever the number of
 * mail-in processes, and each slot reads the whole mail stream (16 times a stream of mail
 * is little). Pinned when first subscribed: the engine refuses another count.
 */
export const MAIL_FILING_SLOTS = 16;
/** The event a receipt is filed by (mail/mail-queue.ts sends it; the upgrade below re-sends it). */
export const MAIL_RECEIVED = 'mail.received';
/** The cooperative group that filed mail before issue 26; retired by migrate. */
const RETIRED_MAIL_GROUP = 'mail_intake';

/**
 * Brings a database up to date: the queue engine, graphile-worker's schema, Stega's tables
 * and functions, the notifications queue with its consumers, and default SLA policies on a
 * fresh database. Idempotent; safe to run from several processes at once.
 */
export async function migrate(
  pool: pg.Pool,
  options: { coopPageSize: number; seedDefaults?: boolean },
): Promise<void> {
  await install(pool);
  await runMigrations({ pgPool: pool, logger: undefined });
  await applyAppMigrations(pool);
  await ensureNotificationsQueue(pool, options.coopPageSize);
  await ensureMailQueue(pool);
  if (options.seedDefaults ?? true) await seedDefaults(pool, new Date());
}

/**
 * Stega's migrations not yet applied, then every function of sql/functions (`create or
 * replace`, in the manifest's order), in one transaction: installing and upgrading are the
 * same act, and a function's file is its body whatever the migrations once said.
 */
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
    for (const fn of functions) await client.query(fn.sql);
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

/**
 * Creates the mail queue and subscribes every slot of the filing consumer before any
 * message is taken in, so none is missed however late mail-in starts; then retires the
 * cooperative group of earlier builds.
 */
async function ensureMailQueue(pool: pg.Pool): Promise<void> {
  await createQueue(pool, MAIL_QUEUE, {
    tickerMaxLag: '100 milliseconds',
    tickerIdlePeriod: '10 seconds',
  });
  await subscribePartitioned(pool, MAIL_QUEUE, MAIL_FILING_CONSUMER, MAIL_FILING_SLOTS);
  await retireMailGroup(pool);
}

/**
 * Retires the cooperative group `mail_intake` that filed mail before issue 26 (unreleased
 * builds made it; left subscribed, it would hold the queue's rotation for ever): its
 * members go (a batch in hand handed back), then the group, and every receipt still
 * `received` gets its `mail.received` again, for the slots subscribed after its first one.
 * The re-sent events carry no partition key: all in slot 0, filed one at a time in
 * arrival order. Stop the old build's mail-in processes first: one started again would
 * re-create the group. Nothing to do once it is gone.
 */
async function retireMailGroup(pool: pg.Pool): Promise<void> {
  await inTransaction(pool, async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('stega.retire_mail_group'))");
    const names = (await consumerInfo(tx, MAIL_QUEUE)).map((c) => c.consumerName);
    if (!names.includes(RETIRED_MAIL_GROUP)) return;
    const prefix = `${RETIRED_MAIL_GROUP}.`;
    for (const name of names.filter((n) => n.startsWith(prefix))) {
      await unsubscribeSubconsumer(tx, MAIL_QUEUE, RETIRED_MAIL_GROUP, name.slice(prefix.length), {
        batchHandling: 1,
      });
    }
    await unsubscribe(tx, MAIL_QUEUE, RETIRED_MAIL_GROUP);
    for (const id of await inboundMailReceivedIds(tx)) {
      await send(tx, MAIL_QUEUE, {
        type: MAIL_RECEIVED,
        payload: { version: 1, inbound_mail_id: id },
      });
    }
  });
}
