// Cooperative consumers with real OS processes: each worker (fixtures/coop-worker.ts) is a
// separate Node process with its own connection. The parent steers them through tables
// and watches the engine's own view (get_consumer_info, the subscription rows).
// Covers issue 3's "what it must show": K-process exactly-once drain, SIGKILL takeover,
// SIGSTOP stall with a late ack, heartbeat, and lock behaviour under explicit transactions.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import type { WorkerConfig } from './fixtures/coop-worker.js';
import { groupName, mustSub, newQueue, one, receiveCoop, rows, until, value } from './support.js';

const { pool, url } = await createTestDatabase();
await pool.query(`
  create table coop_ctl (run text primary key, state text not null);
  create table coop_ready (run text, member text, pid int, primary key (run, member));
  create table coop_done (
    run text not null, member text not null, msg_id bigint not null, batch_id bigint not null,
    at timestamptz not null default clock_timestamp());
  create table coop_acks (
    run text not null, member text not null, batch_id bigint not null, result int not null,
    received_at timestamptz not null, at timestamptz not null default clock_timestamp());
  create table coop_gate (run text, member text, primary key (run, member));
`);

const workerScript = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'fixtures/coop-worker.ts',
);

interface Worker {
  member: string;
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string[];
  /** Set when the test kills it on purpose, so its death is not a failure. */
  doomed: boolean;
}

const live = new Set<Worker>();

function alive(worker: Worker): boolean {
  return worker.child.exitCode === null && worker.child.signalCode === null;
}

/** Kills every worker still running; returns the members that were. */
async function killAll(): Promise<string[]> {
  const all = [...live];
  live.clear();
  const running = all.filter(alive);
  for (const worker of running) {
    worker.child.kill('SIGCONT');
    worker.child.kill('SIGKILL');
  }
  await Promise.all(all.map((w) => w.exit));
  return running.map((w) => w.member);
}

// Workers are always killed, even when a test fails; a passing test must not leak one.
afterEach(async ({ task }) => {
  const leaked = await killAll();
  if (leaked.length > 0 && task.result?.state === 'pass') {
    throw new Error(`test left workers running: ${leaked.join(', ')}`);
  }
});
afterAll(async () => {
  await killAll();
});

function spawnWorker(config: Omit<WorkerConfig, 'url'>): Worker {
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
  const worker: Worker = { member: config.member, child, exit, stderr, doomed: false };
  live.add(worker);
  return worker;
}

/** Throws with the worker's stderr when a worker died that the test did not kill. */
function healthy(workers: Worker[]): void {
  for (const w of workers) {
    if (!w.doomed && !alive(w) && w.child.exitCode !== 0) {
      throw new Error(
        `worker ${w.member} died (code ${w.child.exitCode}, signal ${w.child.signalCode}): ${w.stderr.join('')}`,
      );
    }
  }
}

async function waitFor(
  workers: Worker[],
  what: string,
  check: () => Promise<boolean>,
  ms = 60_000,
) {
  await until(
    what,
    async () => {
      healthy(workers);
      return check();
    },
    ms,
    50,
  );
}

async function newRun(): Promise<string> {
  const run = randomName('run');
  await pool.query(`insert into coop_ctl (run, state) values ($1, 'wait')`, [run]);
  return run;
}

async function setState(run: string, state: 'go' | 'stop'): Promise<void> {
  await pool.query('update coop_ctl set state = $2 where run = $1', [run, state]);
}

async function waitReady(run: string, workers: Worker[]): Promise<void> {
  await waitFor(workers, `${workers.length} workers ready`, async () => {
    const ready = await value<number>(pool, 'select count(*)::int from coop_ready where run = $1', [
      run,
    ]);
    return ready === workers.length;
  });
}

/** Stops the run and expects every worker still running to exit cleanly. */
async function finish(run: string, workers: Worker[]): Promise<void> {
  await setState(run, 'stop');
  for (const w of workers.filter((w) => !w.doomed)) {
    const { code } = await w.exit;
    expect(code, `worker ${w.member}: ${w.stderr.join('')}`).toBe(0);
  }
}

/**
 * A backlog of `windows` ticks of `perWindow` events each. ticker_max_count = perWindow,
 * so the ticker itself closes each window (the first one is forced: after create_queue
 * the first event does not count toward max_count).
 */
async function backlog(q: string, windows: number, perWindow: number): Promise<string[]> {
  await pool.query(`select pgque.set_queue_config($1, 'ticker_max_count', $2)`, [
    q,
    String(perWindow),
  ]);
  const ids: string[] = [];
  for (let w = 0; w < windows; w++) {
    const payloads = Array.from({ length: perWindow }, (_, i) => `w${w}e${i}`);
    ids.push(
      ...(await value<string[]>(pool, `select pgque.send_batch($1, 'job', $2::text[])`, [
        q,
        payloads,
      ])),
    );
    let tick = await value<string | null>(pool, 'select pgque.ticker($1)', [q]);
    if (tick === null) {
      await pool.query('select pgque.force_next_tick($1)', [q]);
      tick = await value<string | null>(pool, 'select pgque.ticker($1)', [q]);
    }
    expect(tick).not.toBeNull();
  }
  return ids;
}

async function registerGroup(q: string, members: string[]): Promise<string> {
  const c = groupName();
  for (const m of members)
    await pool.query('select pgque.register_subconsumer($1, $2, $3)', [q, c, m]);
  return c;
}

interface Done {
  member: string;
  msg_id: string;
  batch_id: string;
}

async function done(run: string): Promise<Done[]> {
  return rows<Done>(
    pool,
    'select member, msg_id, batch_id from coop_done where run = $1 order by at',
    [run],
  );
}

async function acks(run: string) {
  return rows<{ member: string; batch_id: string; result: number; held_s: number }>(
    pool,
    `select member, batch_id, result, extract(epoch from at - received_at)::float8 as held_s
       from coop_acks where run = $1 order by at`,
    [run],
  );
}

/** Every event processed, no member holding a batch, and the group cursor at the newest tick. */
async function drained(q: string, c: string, run: string, ids: string[]): Promise<boolean> {
  const state = await one<{ processed: number; holding: number; behind: boolean }>(
    pool,
    `select (select count(distinct msg_id)::int from coop_done where run = $3 and msg_id = any ($4::bigint[])) as processed,
            (select count(*)::int from pgque.get_consumer_info($1) i
              where i.consumer_name like $2 || '.%' and i.current_batch is not null) as holding,
            (select i.last_tick < (select max(tick_id) from pgque.tick t join pgque.queue qq on qq.queue_id = t.tick_queue
                                    where qq.queue_name = $1)
               from pgque.get_consumer_info($1, $2) i) as behind`,
    [q, c, run, ids],
  );
  return state.processed === ids.length && state.holding === 0 && !state.behind;
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/** Waits until `member` holds a batch and has recorded at least one of its messages. */
async function heldBatch(q: string, c: string, run: string, member: string, workers: Worker[]) {
  let batch: string | null = null;
  await waitFor(workers, `${member} mid-batch`, async () => {
    const info = await one<{ current_batch: string | null }>(
      pool,
      'select current_batch from pgque.get_consumer_info($1, $2)',
      [q, `${c}.${member}`],
    );
    batch = info.current_batch;
    if (batch === null) return false;
    const recorded = await value<number>(
      pool,
      'select count(*)::int from coop_done where run = $1 and member = $2 and batch_id = $3',
      [run, member, batch],
    );
    return recorded >= 1;
  });
  return batch as unknown as string;
}

async function snapshot(q: string) {
  return rows(
    pool,
    `select c.co_name, s.sub_role, s.sub_last_tick, s.sub_next_tick, s.sub_batch,
            (select count(*) from pgque.retry_queue r where r.ev_queue = s.sub_queue) as retries,
            (select count(*) from pgque.dead_letter d where d.dl_queue_id = s.sub_queue) as dead
       from pgque.subscription s
       join pgque.consumer c on c.co_id = s.sub_consumer
       join pgque.queue q on q.queue_id = s.sub_queue
      where q.queue_name = $1
      order by c.co_name`,
    [q],
  );
}

describe('cooperative consumers: real processes', () => {
  it.each([2, 4, 8])(
    '%i worker processes drain a backlog over many ticks: each event once, every member busy',
    async (k) => {
      const q = await newQueue(pool);
      const members = Array.from({ length: k }, (_, i) => `w${i + 1}`);
      const c = await registerGroup(q, members);
      const ids = await backlog(q, 6 * k, 20);
      const run = await newRun();
      const workers = members.map((member) =>
        spawnWorker({ run, queue: q, group: c, member, delayMs: 2 }),
      );
      await waitReady(run, workers);
      await setState(run, 'go');
      await waitFor(workers, 'backlog drained', () => drained(q, c, run, ids), 90_000);
      await finish(run, workers);

      const processed = await done(run);
      const counts = countBy(processed, (d) => d.msg_id);
      expect([...counts.keys()].sort()).toEqual([...ids].sort());
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      const perMember = countBy(processed, (d) => d.member);
      expect([...perMember.keys()].sort()).toEqual([...members].sort());
      // each batch went to one member, and every ack finished a batch
      const batchOwners = new Map<string, Set<string>>();
      for (const d of processed) {
        batchOwners.set(d.batch_id, (batchOwners.get(d.batch_id) ?? new Set()).add(d.member));
      }
      expect([...batchOwners.values()].filter((owners) => owners.size !== 1)).toEqual([]);
      const acked = await acks(run);
      expect(acked.map((a) => a.result).filter((r) => r !== 1)).toEqual([]);
      expect(new Set(acked.map((a) => a.batch_id))).toEqual(new Set(batchOwners.keys()));
    },
    150_000,
  );

  it('a SIGKILLed member loses its batch after dead_interval; duplicates come only from that batch', async () => {
    const q = await newQueue(pool);
    const members = ['w1', 'w2', 'w3'];
    const c = await registerGroup(q, members);
    const ids = await backlog(q, 12, 10);
    const run = await newRun();
    const common = { run, queue: q, group: c, touchMs: 200, deadInterval: '2 seconds' };
    // the victim is slow (3 s per batch) but heartbeats, so it is robbed only once dead
    const victim = spawnWorker({ ...common, member: 'w1', delayMs: 300 });
    const others = ['w2', 'w3'].map((member) => spawnWorker({ ...common, member, delayMs: 30 }));
    const workers = [victim, ...others];
    await waitReady(run, workers);
    await setState(run, 'go');

    const batch = await heldBatch(q, c, run, 'w1', workers);
    const window = (
      await rows<{ ev_id: string }>(pool, 'select ev_id from pgque.get_batch_events($1)', [batch])
    ).map((e) => e.ev_id);
    victim.doomed = true;
    victim.child.kill('SIGKILL');
    expect((await victim.exit).signal).toBe('SIGKILL');
    // killed mid-batch: it never acked, and still holds the batch until someone takes it
    expect(
      await value<number>(
        pool,
        'select count(*)::int from coop_acks where run = $1 and batch_id = $2',
        [run, batch],
      ),
    ).toBe(0);

    await waitFor(workers, 'backlog drained after the crash', () => drained(q, c, run, ids));
    await finish(run, workers);

    const processed = await done(run);
    const counts = countBy(processed, (d) => d.msg_id);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    const victimPartial = processed
      .filter((d) => d.member === 'w1' && d.batch_id === batch)
      .map((d) => d.msg_id);
    // exactly the messages the victim recorded before dying were processed twice
    expect(victimPartial.length).toBeGreaterThanOrEqual(1);
    expect(duplicates.sort()).toEqual([...victimPartial].sort());
    expect(Math.max(...counts.values())).toBe(2);
    for (const id of duplicates) expect(window).toContain(id);
    // the whole window was taken over by a live member under a new batch id
    const takeover = processed.filter((d) => window.includes(d.msg_id) && d.member !== 'w1');
    expect(takeover.map((d) => d.msg_id).sort()).toEqual([...window].sort());
    expect(new Set(takeover.map((d) => d.batch_id)).size).toBe(1);
    expect(takeover[0]?.batch_id).not.toBe(batch);
    // no live member was robbed: every ack finished its batch
    expect((await acks(run)).filter((a) => a.result !== 1)).toEqual([]);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBeNull();
    console.info(`crash takeover: ${duplicates.length} duplicate(s) out of ${ids.length} events`);
  }, 120_000);

  it('a SIGSTOPped member is robbed; after SIGCONT its late ack returns 0 and changes nothing', async () => {
    const q = await newQueue(pool);
    const c = await registerGroup(q, ['w1', 'w2']);
    const ids = await backlog(q, 1, 10);
    const run = await newRun();
    const base = { run, queue: q, group: c };
    const stalled = spawnWorker({
      ...base,
      member: 'w1',
      delayMs: 300,
      touchMs: 200,
      maxBatches: 1,
    });
    await waitReady(run, [stalled]);
    await setState(run, 'go');
    const batch = await heldBatch(q, c, run, 'w1', [stalled]);
    const window = await mustSub(pool, q, `${c}.w1`);
    stalled.child.kill('SIGSTOP');

    // the taker asks with dead_interval 2 s, heartbeats, and holds its ack until released
    const taker = spawnWorker({
      ...base,
      member: 'w2',
      deadInterval: '2 seconds',
      touchMs: 200,
      gateAck: true,
    });
    const workers = [stalled, taker];
    await waitFor(workers, 'w2 took the batch over and processed it', async () => {
      const recorded = await value<number>(
        pool,
        `select count(*)::int from coop_done where run = $1 and member = 'w2'`,
        [run],
      );
      return recorded === ids.length;
    });
    const owner = await mustSub(pool, q, `${c}.w2`);
    expect(owner.sub_batch).not.toBeNull();
    expect(owner.sub_batch).not.toBe(batch);
    expect([owner.sub_last_tick, owner.sub_next_tick]).toEqual([
      window.sub_last_tick,
      window.sub_next_tick,
    ]);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBeNull();

    const before = await snapshot(q);
    stalled.child.kill('SIGCONT');
    expect((await stalled.exit).code).toBe(0);
    expect((await acks(run)).map((a) => [a.member, a.batch_id, a.result])).toEqual([
      ['w1', batch, 0],
    ]);
    expect(await snapshot(q)).toEqual(before);

    await pool.query(`insert into coop_gate (run, member) values ($1, 'w2')`, [run]);
    await waitFor(workers, 'w2 acked', async () => (await acks(run)).length === 2);
    await waitFor(workers, 'drained', () => drained(q, c, run, ids));
    await finish(run, [taker]);
    expect((await acks(run)).map((a) => [a.member, a.batch_id, a.result])).toEqual([
      ['w1', batch, 0],
      ['w2', owner.sub_batch, 1],
    ]);
    // w2 processed every event once; the stalled member's records are the only repeats
    const processed = await done(run);
    expect(
      processed
        .filter((d) => d.member === 'w2')
        .map((d) => d.msg_id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(processed.filter((d) => d.member === 'w1').every((d) => d.batch_id === batch)).toBe(
      true,
    );
  }, 120_000);

  it.each([
    ['with a heartbeat keeps', true],
    ['without a heartbeat loses', false],
  ])(
    'a slow member %s its batch beyond dead_interval while a rival asks with it',
    async (_, touching) => {
      const q = await newQueue(pool);
      const c = await registerGroup(q, ['w1', 'w2', 'probe']);
      const ids = await backlog(q, 1, 12);
      const run = await newRun();
      const base = { run, queue: q, group: c };
      // 12 × 500 ms: the batch is held about 6 s, three times the dead_interval
      const slow = spawnWorker({
        ...base,
        member: 'w1',
        delayMs: 500,
        touchMs: touching ? 200 : null,
        maxBatches: 1,
      });
      await waitReady(run, [slow]);
      await setState(run, 'go');
      const batch = await heldBatch(q, c, run, 'w1', [slow]);
      const rival = spawnWorker({ ...base, member: 'w2', deadInterval: '2 seconds' });
      const workers = [slow, rival];

      if (touching) {
        // the parent also asks, as member 'probe', once the batch is older than dead_interval
        await waitFor(workers, 'w1 holding its batch for more than 2 s', async () => {
          const age = await value<number | null>(
            pool,
            `select extract(epoch from clock_timestamp() - min(at))::float8
               from coop_done where run = $1 and batch_id = $2`,
            [run, batch],
          );
          return age !== null && age > 2.2;
        });
        expect(await receiveCoop(pool, q, c, 'probe', 100, '2 seconds')).toEqual([]);
        expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBe(batch);
      }
      expect((await slow.exit).code).toBe(0);
      await waitFor(workers, 'drained', () => drained(q, c, run, ids));
      await finish(run, workers);

      const [slowAck, ...rest] = (await acks(run)).filter((a) => a.member === 'w1');
      expect(rest).toEqual([]);
      expect(slowAck?.batch_id).toBe(batch);
      expect(slowAck?.held_s).toBeGreaterThan(2);
      const byRival = (await done(run)).filter((d) => d.member === 'w2');
      if (touching) {
        expect(slowAck?.result).toBe(1);
        expect(byRival).toEqual([]);
      } else {
        expect(slowAck?.result).toBe(0);
        expect(byRival.map((d) => d.msg_id).sort()).toEqual([...ids].sort());
      }
    },
    120_000,
  );

  it('two worker processes allocating inside held transactions never share a batch nor deadlock', async () => {
    const q = await newQueue(pool);
    const c = await registerGroup(q, ['w1', 'w2']);
    const ids = await backlog(q, 20, 5);
    const run = await newRun();
    const workers = ['w1', 'w2'].map((member) =>
      spawnWorker({ run, queue: q, group: c, member, holdMs: 30 }),
    );
    await waitReady(run, workers);
    await setState(run, 'go');
    await waitFor(workers, 'drained', () => drained(q, c, run, ids));
    await finish(run, workers);
    const processed = await done(run);
    expect(processed.map((d) => d.msg_id).sort()).toEqual([...ids].sort());
    const acked = await acks(run);
    expect(acked).toHaveLength(20);
    expect(new Set(acked.map((a) => a.batch_id)).size).toBe(20);
    expect(acked.every((a) => a.result === 1)).toBe(true);
  }, 120_000);
});
