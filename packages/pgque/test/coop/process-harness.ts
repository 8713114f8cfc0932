// The real-process harness of the cooperative tests: worker processes
// (fixtures/coop-worker.ts, one OS process and one connection each), steered through
// control tables, and helpers that watch the engine's own view of the group.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, expect } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import type { WorkerConfig } from './fixtures/coop-worker.js';
import { groupName, one, rows, value } from './support.js';

export interface Worker {
  member: string;
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string[];
  /** Set when the test kills it on purpose, so its death is not a failure. */
  doomed: boolean;
}

export interface Done {
  member: string;
  msg_id: string;
  batch_id: string;
}

export function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/**
 * A fresh database with the control tables, and the process helpers bound to it. Workers
 * are always killed after each test, and a passing test that leaks one fails.
 */
export async function workerProcesses() {
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
    await eventually(
      async () => {
        healthy(workers);
        return check();
      },
      what,
      { timeoutMs: ms, intervalMs: 50 },
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
      const ready = await value<number>(
        pool,
        'select count(*)::int from coop_ready where run = $1',
        [run],
      );
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

  async function done(run: string): Promise<Done[]> {
    return rows<Done>(
      pool,
      'select member, msg_id, batch_id from coop_done where run = $1 order by at',
      [run],
    );
  }

  async function acks(run: string) {
    return rows<{ member: string; batch_id: string; result: number }>(
      pool,
      'select member, batch_id, result from coop_acks where run = $1 order by at',
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

  return {
    pool,
    url,
    spawnWorker,
    killAll,
    healthy,
    waitFor,
    newRun,
    setState,
    waitReady,
    finish,
    backlog,
    registerGroup,
    done,
    acks,
    drained,
    heldBatch,
    snapshot,
  };
}
