/**
 * The members of one cooperative group as OS processes (bench/coop-worker.ts), shared by the
 * cooperative benchmarks. `startMembers` spawns them and waits until every one is connected
 * and warmed up; `drain(queue)` tells them all to go and times it until the last one finds
 * nothing left; the same processes can drain several queues in turn.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { WorkerCommand, WorkerReport } from './coop-worker.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..');
const workerScript = path.join(here, 'coop-worker.ts');

/** A queue with one tick and no events: workers warm up on it before any clock starts. */
export const WARM_QUEUE = 'bench_coop_warmup';

/** Creates WARM_QUEUE in a fresh database (once per database). */
export async function createWarmQueue(client: pg.Client): Promise<void> {
  await client.query('select pgque.create_queue($1)', [WARM_QUEUE]);
}

export interface Drain {
  /** From `go` to the last member's report. */
  millis: number;
  reports: WorkerReport[];
  events: number;
  idSum: bigint;
  /** Smallest and largest batch any member received. */
  minBatch: number;
  maxBatch: number;
}

export interface Members {
  drain(queue: string): Promise<Drain>;
  /** Asks every member to stop and waits for it; kills one that does not within 10 s. */
  close(): Promise<void>;
}

/** Spawns one process per subconsumer name, each handling `delayMs` per event. */
export async function startMembers(
  url: string,
  group: string,
  subconsumers: string[],
  delayMs: number,
): Promise<Members> {
  const children = subconsumers.map((subconsumer) =>
    spawn(
      process.execPath,
      ['--import', 'tsx', workerScript, url, group, subconsumer, String(delayMs), WARM_QUEUE],
      { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    ),
  );
  const close = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        if (child.connected) child.send({ type: 'stop' } satisfies WorkerCommand);
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  };
  try {
    await Promise.all(children.map((child) => nextMessage(child, 'ready')));
  } catch (error) {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  }
  return {
    async drain(queue) {
      const done = children.map((child) => nextMessage<WorkerReport>(child, 'done'));
      const started = performance.now();
      for (const child of children) child.send({ type: 'go', queue } satisfies WorkerCommand);
      const reports = await Promise.all(
        done.map((report) => report.then((r) => ({ report: r, at: performance.now() }))),
      );
      const millis = Math.max(...reports.map((r) => r.at)) - started;
      const busy = reports.map((r) => r.report).filter((r) => r.batches > 0);
      return {
        millis,
        reports: reports.map((r) => r.report),
        events: reports.reduce((sum, r) => sum + r.report.events, 0),
        idSum: reports.reduce((sum, r) => sum + BigInt(r.report.idSum), 0n),
        minBatch: Math.min(...busy.map((r) => r.minBatch)),
        maxBatch: Math.max(...busy.map((r) => r.maxBatch)),
      };
    },
    close,
  };
}

/** Throws unless the members handled exactly the events sent (count and sum of msg_ids). */
export function checkExactlyOnce(drain: Drain, events: number, idSum: bigint): void {
  if (drain.events !== events || drain.idSum !== idSum) {
    throw new Error(
      `members handled ${drain.events} events (id sum ${drain.idSum}); expected ${events} (${idSum})`,
    );
  }
}

/** Resolves with the worker's next message of `type`; rejects if it exits first. */
function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type?: string }) => {
      if (message?.type !== type) return;
      cleanup();
      resolve(message as T);
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`worker exited (${code ?? signal}) before '${type}'`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}
