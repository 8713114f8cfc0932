// Per-key order under kills, with real processes: four PartitionedConsumer workers
// (fixtures/partition-worker.ts, each an OS process with its own connections) share the 8
// slots of one consumer while 40 keys are sent, 60 steps each; three times a worker is
// killed (SIGKILL) in the middle of a batch, and a new one started. Every step must be
// handled, each key's steps must first arrive in order (a killed holder's batch is handed
// out again from its start: a replay, never a skip), and a key must never go back to an
// older lease epoch once a newer holder has handled it.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import {
  connect,
  createQueue,
  partitionSlotStatus,
  subscribePartitioned,
  Ticker,
} from '../../src/index.js';
import type { PartitionWorkerConfig } from './fixtures/partition-worker.js';

const { pool, url } = await createTestDatabase();
await pool.query(`
  create table part_ctl (run text primary key, state text not null);
  create table part_ready (run text, worker text, pid int, primary key (run, worker));
  create table part_seen (
    id bigserial primary key, run text not null, worker text not null, key text not null,
    seq int not null, slot int not null, epoch bigint not null);
  create table part_hold (run text, worker text, primary key (run, worker));
  create table part_holding (run text, worker text, key text, seq int);
`);

const client = await connect(url, { max: 4 });
const ticker = new Ticker(client, { period: 20, retryPeriod: 100 });
ticker.start();
afterAll(async () => {
  await ticker.stop();
  await client.close();
});

const workerScript = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'fixtures/partition-worker.ts',
);

interface Worker {
  name: string;
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string[];
  killed: boolean;
}
const spawned = new Set<Worker>();

function alive(w: Worker): boolean {
  return w.child.exitCode === null && w.child.signalCode === null;
}

// workers are always killed after a test; a passing test must not leave one running
afterEach(async ({ task }) => {
  const running = [...spawned].filter(alive);
  for (const w of running) w.child.kill('SIGKILL');
  await Promise.all([...spawned].map((w) => w.exit));
  spawned.clear();
  if (running.length > 0 && task.result?.state === 'pass') {
    throw new Error(`test left workers running: ${running.map((w) => w.name).join(', ')}`);
  }
});

function start(config: Omit<PartitionWorkerConfig, 'url'>): Worker {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', workerScript, JSON.stringify({ url, ...config })],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const w: Worker = { name: config.worker, child, exit, stderr, killed: false };
  spawned.add(w);
  return w;
}

/** Polls `check` (failing on a worker that died unbidden) until it holds. */
async function until(what: string, check: () => Promise<boolean>, ms = 90_000) {
  await eventually(
    async () => {
      for (const w of spawned) {
        if (!w.killed && !alive(w) && w.child.exitCode !== 0) {
          throw new Error(`worker ${w.name} died: ${w.stderr.join('')}`);
        }
      }
      return check();
    },
    what,
    { timeoutMs: ms, intervalMs: 50 },
  );
}

async function count(db: pg.Pool, text: string, values: unknown[]): Promise<number> {
  return Number((await db.query(text, values)).rows[0].n);
}

describe('partitioned consumption under kills', () => {
  // seven worker processes start on a shared 2-core machine: minutes, not seconds, under load
  it('keeps each key in order while workers are killed mid-batch and replaced', {
    timeout: 300_000,
  }, async () => {
    const queue = randomName();
    const consumer = 'ordered';
    const slots = 8;
    const keys = Array.from({ length: 40 }, (_, i) => `ticket-${i}`);
    const rounds = 60;
    await createQueue(client.pool, queue, { tickerMaxLag: 50, tickerIdlePeriod: 200 });
    expect(await subscribePartitioned(client.pool, queue, consumer, slots)).toBe(slots);
    const run = randomName('run');
    await pool.query(`insert into part_ctl values ($1, 'go')`, [run]);
    const config = { run, queue, consumer, slots, leaseTtl: 3_000, delayMs: 1 };
    let next = 1;
    const launch = () => start({ ...config, worker: `w${next++}` });
    const workers = [launch(), launch(), launch(), launch()];
    await until('4 workers holding all 8 slots, 2 each', async () => {
      const status = await partitionSlotStatus(client.pool, { queue, consumer });
      const owners = status.map((s) => s.leaseOwner);
      return (
        owners.every((o) => o !== null) &&
        [...new Set(owners)].every((o) => owners.filter((x) => x === o).length === 2)
      );
    });

    let sent = 0;
    const sendRound = async () => {
      // one transaction per round: step n of every key commits before step n + 1 is sent
      await pool.query(
        `select count(pgque.send($1, 'step', jsonb_build_object('key', k, 'seq', $2::int), k))
           from unnest($3::text[]) as k`,
        [queue, sent, keys],
      );
      sent++;
    };
    const killMidBatch = async (victim: Worker) => {
      await until(`${victim.name} holding slots`, async () =>
        (await partitionSlotStatus(client.pool, { queue, consumer })).some(
          (s) => s.leaseOwner === victim.name,
        ),
      );
      await pool.query('insert into part_hold values ($1, $2)', [run, victim.name]);
      await until(`${victim.name} holding a batch`, async () => {
        if (sent < rounds) await sendRound(); // keep events coming to its slots
        return (
          (await count(
            pool,
            'select count(*) as n from part_holding where run = $1 and worker = $2',
            [run, victim.name],
          )) > 0
        );
      });
      victim.killed = true;
      victim.child.kill('SIGKILL');
      await victim.exit;
      workers.push(launch());
    };

    while (sent < 15) await sendRound();
    await killMidBatch(workers[0] as Worker);
    while (sent < 30) await sendRound();
    await killMidBatch(workers[1] as Worker);
    while (sent < 45) await sendRound();
    await killMidBatch(workers[4] as Worker); // a replacement, killed in turn
    while (sent < rounds) await sendRound();

    const total = keys.length * rounds;
    await until(`all ${total} steps handled`, async () => {
      const handled = await count(
        pool,
        'select count(*) as n from (select distinct key, seq from part_seen where run = $1) s',
        [run],
      );
      return handled === total;
    });
    await pool.query(`update part_ctl set state = 'stop' where run = $1`, [run]);
    for (const w of workers.filter((x) => !x.killed)) {
      const { code } = await w.exit;
      expect(code, `${w.name}: ${w.stderr.join('')}`).toBe(0);
    }

    const { rows } = await pool.query(
      'select worker, key, seq, slot, epoch::int as epoch from part_seen where run = $1 order by id',
      [run],
    );
    const seen = rows as {
      worker: string;
      key: string;
      seq: number;
      slot: number;
      epoch: number;
    }[];
    for (const key of keys) {
      const steps = seen.filter((s) => s.key === key);
      // first arrivals in order, every step; later arrivals only replay what came before
      let highest = -1;
      const first: number[] = [];
      for (const s of steps) {
        expect(s.seq, `${key}: step ${s.seq} after ${highest}`).toBeLessThanOrEqual(highest + 1);
        if (s.seq === highest + 1) first.push(s.seq);
        highest = Math.max(highest, s.seq);
      }
      expect(first).toEqual(Array.from({ length: rounds }, (_, i) => i));
      // one slot per key, and once a newer lease has handled the key, no older one does
      expect(new Set(steps.map((s) => s.slot)).size).toBe(1);
      const epochs = steps.map((s) => s.epoch);
      expect(epochs, key).toEqual([...epochs].sort((a, b) => a - b));
    }
    // each kill left a batch half done: its events were handed out again, to another worker
    const { rows: held } = await pool.query(
      'select worker, key, seq from part_holding where run = $1',
      [run],
    );
    // (a victim holds a batch on each of its slots that got an event after the hold)
    expect(new Set(held.map((h) => h.worker)).size).toBe(3);
    for (const h of held as { worker: string; key: string; seq: number }[]) {
      const redone = seen.filter(
        (s) => s.key === h.key && s.seq === h.seq && s.worker !== h.worker,
      );
      expect(redone.length, `${h.worker}'s held step ${h.key}/${h.seq}`).toBeGreaterThan(0);
    }
    // the killed workers' slots went to others under a higher epoch; nobody holds two leases
    const status = await partitionSlotStatus(client.pool, { queue, consumer });
    expect(status.every((s) => s.epoch >= 1n)).toBe(true);
    expect(status.some((s) => s.epoch >= 3n)).toBe(true);
  });
});
