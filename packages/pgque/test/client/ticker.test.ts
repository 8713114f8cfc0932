import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import {
  ack,
  type Client,
  Consumer,
  createQueue,
  DEFAULT_TICKER_LOCK_KEY,
  nack,
  queueInfo,
  receive,
  send,
  sendBatch,
  subscribe,
  TICKER_WAKE_CHANNEL,
  Ticker,
} from '../../src/index.js';
import { clientFor, forceTick, memoryLogger } from './support.js';

const here = path.dirname(fileURLToPath(import.meta.url));

let url: string;
let client: Client;
// for a ticker that must see no queue but the test's own
const lonelyDb = await createTestDatabase();

beforeAll(async () => {
  const db = await createTestDatabase();
  url = db.url;
  client = await clientFor(url);
});

afterAll(async () => {
  await client.close();
});

async function lastTick(queue: string): Promise<bigint> {
  return (await queueInfo(client.pool, queue))?.lastTickId ?? -1n;
}

/**
 * Waits until the standby ticker (the ticker session that does not hold the lock) has
 * asked for the lock at least `times` more times: each failed attempt is one statement,
 * after which the server moves its session's `state_change`.
 */
async function standbyAttempts(times: number): Promise<void> {
  const standby = async (): Promise<number | undefined> => {
    const { rows } = await client.pool.query(
      `select a.state_change from pg_stat_activity a
        where a.datname = current_database() and a.application_name = 'pgque-ticker'
          and a.state = 'idle'
          and not exists (select 1 from pg_locks l
                           where l.pid = a.pid and l.locktype = 'advisory' and l.granted)`,
    );
    const changed = rows.length === 1 ? (rows[0]?.state_change as Date | undefined) : undefined;
    return changed?.getTime();
  };
  let last = await eventually(standby, 'the standby session');
  for (let seen = 0; seen < times; seen++) {
    last = await eventually(async () => {
      const now = await standby();
      return now !== undefined && now !== last ? now : undefined;
    }, 'an election attempt of the standby');
  }
}

async function lockHolders(): Promise<number> {
  const { rows } = await client.pool.query(
    `select count(*)::int as n from pg_locks
      where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())
        and ((classid::bigint << 32) | objid::bigint) = $1`,
    [DEFAULT_TICKER_LOCK_KEY],
  );
  return rows[0].n;
}

describe('Ticker', () => {
  it('ticks every queue, moves due retries and rotates tables as leader', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue, { tickerMaxLag: 50, rotationPeriod: 200 });
    await subscribe(client.pool, queue, 'c');
    const ticker = new Ticker(client, { period: 20, retryPeriod: 50, maintPeriod: 100 });
    try {
      ticker.start();
      ticker.start();
      await eventually(() => ticker.isLeader, 'leadership');
      expect(await lockHolders()).toBe(1);

      const id = await send(client.pool, queue, { type: 't' });
      const [message] = await eventually(async () => {
        const got = await receive(client.pool, queue, 'c');
        return got.length > 0 ? got : undefined;
      }, 'a tick with the event');
      expect(message?.msgId).toBe(id);
      await nack(client.pool, message?.batchId as bigint, message as never, { retryAfter: 0 });
      await ack(client.pool, message?.batchId as bigint);
      const [retried] = await eventually(async () => {
        const got = await receive(client.pool, queue, 'c');
        return got.length > 0 ? got : undefined;
      }, 'the retry moved back and ticked');
      expect(retried).toMatchObject({ msgId: id, retryCount: 1 });
      await ack(client.pool, retried?.batchId as bigint);

      // a rotation needs every cursor past the previous switch, so 'c' keeps consuming
      const tables = new Set<number>();
      await eventually(async () => {
        const batch = await receive(client.pool, queue, 'c');
        if (batch[0]) await ack(client.pool, batch[0].batchId);
        tables.add((await queueInfo(client.pool, queue))?.curTable as number);
        return tables.size === 3;
      }, 'the event tables to rotate twice');
    } finally {
      await Promise.all([ticker.stop(), ticker.stop()]);
    }
    expect(ticker.isLeader).toBe(false);
    expect(await lockHolders()).toBe(0);
  });

  it('elects one leader among several tickers, and another takes over when it stops', async () => {
    const changes: string[] = [];
    const make = (name: string) =>
      new Ticker(client, {
        period: 20,
        electionInterval: 50,
        onLeadershipChange: (leader) => changes.push(`${name}:${leader}`),
      });
    const one = make('one');
    const two = make('two');
    try {
      one.start();
      await eventually(() => one.isLeader, 'the first leader');
      two.start();
      await eventually(async () => (await lockHolders()) === 1 && two.running, 'the standby');
      // the standby keeps trying but never gets the lock while the leader lives
      await standbyAttempts(3);
      expect(two.isLeader).toBe(false);
      expect(one.isLeader).toBe(true);
      await one.stop();
      await eventually(() => two.isLeader, 'the takeover');
      expect(changes).toEqual(['one:true', 'one:false', 'two:true']);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });

  it('keeps ticking healthy queues when one queue fails to tick', async () => {
    const broken = randomName();
    const healthy = randomName();
    await createQueue(client.pool, broken, { tickerMaxLag: 50 });
    await createQueue(client.pool, healthy, { tickerMaxLag: 50 });
    await subscribe(client.pool, healthy, 'c');
    // a trigger makes every new tick of the broken queue fail
    await client.pool.query(`
      create function public.refuse_tick() returns trigger language plpgsql as $$
      begin
        if new.tick_queue = (select queue_id from pgque.queue where queue_name = '${broken}') then
          raise exception 'tick refused for the test';
        end if;
        return new;
      end $$;
      create trigger refuse_tick before insert on pgque.tick
        for each row execute function public.refuse_tick();`);
    const logger = memoryLogger();
    const ticker = new Ticker(client, { period: 20, logger });
    try {
      ticker.start();
      await send(client.pool, broken, { type: 't' });
      const id = await send(client.pool, healthy, { type: 't' });
      const [message] = await eventually(async () => {
        const got = await receive(client.pool, healthy, 'c');
        return got.length > 0 ? got : undefined;
      }, 'a tick of the healthy queue');
      expect(message?.msgId).toBe(id);
      await eventually(
        () => logger.lines.find((l) => l.message === 'ticking a queue failed'),
        'the failure to be logged',
      );
      expect(
        logger.lines.find((l) => l.message === 'ticking a queue failed')?.fields,
      ).toMatchObject({
        queue: broken,
      });
    } finally {
      await ticker.stop();
      await client.pool.query(
        'drop trigger refuse_tick on pgque.tick; drop function public.refuse_tick()',
      );
    }
  });

  it('fails over between two processes: kill the leader and ticks resume from the other', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue, { tickerMaxLag: 50, tickerIdlePeriod: 100 });
    const children: ChildProcess[] = [];
    const lines: { pid: number; leader?: boolean; ready?: boolean }[] = [];
    const launch = () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(here, 'fixtures/ticker-process.ts'), url],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        lines.push(JSON.parse(line));
      });
      children.push(child);
      return child;
    };
    try {
      const first = launch();
      await eventually(
        () => lines.some((l) => l.pid === first.pid && l.leader === true),
        'the first process to lead',
      );
      const second = launch();
      await eventually(
        () => lines.some((l) => l.pid === second.pid && l.ready),
        'the second process',
      );
      const before = await lastTick(queue);
      await eventually(
        async () => (await lastTick(queue)) > before,
        'ticks from the first process',
      );
      expect(lines.some((l) => l.pid === second.pid && l.leader === true)).toBe(false);

      const killedAt = Date.now();
      first.kill('SIGKILL');
      await eventually(
        () => lines.some((l) => l.pid === second.pid && l.leader === true),
        'the takeover',
        {
          timeoutMs: 15_000,
        },
      );
      const afterTakeover = await lastTick(queue);
      await eventually(
        async () => (await lastTick(queue)) > afterTakeover,
        'ticks from the second process',
      );
      const resumedAfterMs = Date.now() - killedAt;
      console.log(
        `ticker failover: ticks resumed ${resumedAfterMs} ms after SIGKILL of the leader`,
      );
      expect(await lockHolders()).toBe(1);

      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));
      expect(await lockHolders()).toBe(0);
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('Ticker: a busy queue ticked for its waiting consumer', () => {
  it('delivers without the period, its ticks busyTickInterval apart on the server clock', async () => {
    // default thresholds (500 events or 3 s) and a ticker period of a minute, so only
    // prompt ticks deliver; wakeMaxRate 0 makes a woken queue busy at its first event, so
    // each tick with events is one made for the waiting consumer (a single producer
    // commits each send before the next, so no armed tick finds its events counted already)
    const queue = randomName();
    await createQueue(client.pool, queue);
    let handled = 0;
    const consumer = new Consumer(client, queue, 'c', { pollInterval: 60_000 }).handle('t', () => {
      handled++;
    });
    await consumer.start();
    const ticker = new Ticker(client, {
      period: 60_000,
      retryPeriod: 60_000,
      maintPeriod: 60_000,
      wakeMaxRate: 0,
      busyTickInterval: 20,
    });
    try {
      ticker.start();
      await eventually(() => ticker.isLeader, 'leadership');
      await eventually(() => armed(queue), 'the quiet queue to be armed');
      const first = await lastTick(queue);
      const burst = Array.from({ length: 10 }, (_, i) => i);
      for (let i = 0; i < 60; i++) await sendBatch(client.pool, queue, 't', burst);
      await eventually(() => handled === 600, 'every event at the consumer');
      const { rows } = await client.pool.query(
        `select (tick_time - lag(tick_time) over (order by tick_id)) >= interval '20 milliseconds' as spaced
           from pgque.tick
          where tick_queue = (select queue_id from pgque.queue where queue_name = $1)
            and tick_id >= $2
          order by tick_id`,
        [queue, first],
      );
      const ticks = rows.slice(1);
      expect(ticks.length).toBeGreaterThanOrEqual(1);
      expect(ticks.filter((row) => row.spaced !== true)).toEqual([]);
    } finally {
      await ticker.stop();
      await consumer.stop();
    }
  });
});

describe('Ticker: a busy queue whose consumer was left behind', () => {
  it('ticks for the consumer once it catches up, without waiting for the period', async () => {
    // a database of its own, so no other queue has the ticker calling ticker_prompt; a
    // period of a minute and thresholds it never reaches (500 events, an hour), so only a
    // ticker_prompt call can tick, and none is due while the consumer is three ticks behind
    const lonely = await clientFor(lonelyDb.url);
    const queue = randomName();
    await createQueue(lonely.pool, queue, { tickerMaxLag: 3_600_000 });
    await subscribe(lonely.pool, queue, 'c');
    const tickOf = async () => (await queueInfo(lonely.pool, queue))?.lastTickId ?? -1n;
    const batch = Array.from({ length: 10 }, (_, i) => i);
    for (let i = 0; i < 3; i++) {
      await sendBatch(lonely.pool, queue, 't', batch);
      await forceTick(lonely, queue);
    }
    await sendBatch(lonely.pool, queue, 't', batch);
    const behind = await tickOf();
    const ticker = new Ticker(lonely, {
      period: 60_000,
      retryPeriod: 60_000,
      maintPeriod: 60_000,
      busyTickInterval: 20,
    });
    try {
      ticker.start();
      await eventually(() => ticker.isLeader, 'leadership');
      // its first ticker_prompt call has returned (finding the consumer three behind): the
      // ticker now waits for a notification or its period
      await eventually(
        async () =>
          (
            await lonely.pool.query(
              `select 1 from pg_stat_activity
                where datname = current_database() and application_name = 'pgque-ticker'
                  and state = 'idle' and query like '%ticker_prompt%'`,
            )
          ).rows.length === 1,
        'the first ticker_prompt call',
      );
      // 'c' catches up: its second batch leaves it one tick short of the newest (near)
      for (let i = 0; i < 2; i++) {
        const messages = await receive(lonely.pool, queue, 'c', 1_000);
        expect(messages).toHaveLength(10);
        await ack(lonely.pool, (messages[0] as { batchId: bigint }).batchId);
      }
      await eventually(async () => (await tickOf()) === behind + 1n, 'a tick for the consumer');
      // the new tick holds the events that were pending
      const rest: number[] = [];
      for (let i = 0; i < 2; i++) {
        const messages = await receive(lonely.pool, queue, 'c', 1_000);
        rest.push(messages.length);
        if (messages[0]) await ack(lonely.pool, messages[0].batchId);
      }
      expect(rest).toEqual([10, 10]);
    } finally {
      await ticker.stop();
      await lonely.close();
    }
  });
});

/** Counts the producers' wake-up notifications per queue, on a LISTEN connection of its own. */
async function wakeListener() {
  const listener = client.newSession('wake-listener');
  await listener.connect();
  const counts = new Map<string, number>();
  listener.on('notification', (note) => {
    if (note.channel !== TICKER_WAKE_CHANNEL || !note.payload) return;
    counts.set(note.payload, (counts.get(note.payload) ?? 0) + 1);
  });
  await listener.query(`listen "${TICKER_WAKE_CHANNEL}"`);
  return {
    count: (queue: string) => counts.get(queue) ?? 0,
    /** Every notification committed before this call has arrived once it resolves. */
    async flush() {
      const marker = randomName();
      await client.pool.query('select pg_notify($1, $2)', [TICKER_WAKE_CHANNEL, marker]);
      await eventually(() => counts.has(marker), 'the marker notification');
    },
    close: () => listener.end(),
  };
}

async function armed(queue: string): Promise<boolean> {
  const { rows } = await client.pool.query(
    'select queue_ticker_wake as armed from pgque.queue where queue_name = $1',
    [queue],
  );
  return rows[0]?.armed === true;
}

describe('Ticker: a tick at the first commit', () => {
  const slowTicker = () =>
    new Ticker(client, { period: 60_000, retryPeriod: 60_000, maintPeriod: 60_000 });

  it('ticks a quiet queue at its first event, without waiting for the period', async () => {
    // default thresholds (500 events or 3 s) and a ticker period of a minute: only the
    // wake-up can deliver within the waits below
    const queue = randomName();
    await createQueue(client.pool, queue);
    const handled: bigint[] = [];
    const consumer = new Consumer(client, queue, 'c', { pollInterval: 60_000 }).handle(
      't',
      (event) => {
        handled.push(event.id);
      },
    );
    await consumer.start();
    const wakes = await wakeListener();
    const ticker = slowTicker();
    try {
      ticker.start();
      await eventually(() => ticker.isLeader, 'leadership');
      for (let round = 0; round < 3; round++) {
        await eventually(() => armed(queue), 'the quiet queue to be armed');
        const ticks = await lastTick(queue);
        const id = await send(client.pool, queue, { type: 't' });
        await eventually(() => handled.includes(id), 'the event at the consumer');
        expect(await lastTick(queue)).toBe(ticks + 1n);
      }
      await wakes.flush();
      expect(wakes.count(queue)).toBe(3);
      expect(handled).toHaveLength(3);
    } finally {
      await ticker.stop();
      await consumer.stop();
      await wakes.close();
    }
  });

  it('a busy queue sends no notification per event and ticks by its thresholds', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue);
    await subscribe(client.pool, queue, 'c');
    const wakes = await wakeListener();
    const ticker = slowTicker();
    try {
      ticker.start();
      await eventually(() => ticker.isLeader, 'leadership');
      await eventually(() => armed(queue), 'the quiet queue to be armed');
      // a burst: the first transactions wake the ticker, which finds events arriving
      // faster than wakeMaxRate and disarms the queue
      const burst = Array.from({ length: 100 }, (_, i) => i);
      await Promise.all(
        [0, 1, 2, 3].map(async () => {
          for (let i = 0; i < 25; i++) await sendBatch(client.pool, queue, 't', burst);
        }),
      );
      await eventually(async () => !(await armed(queue)), 'the busy queue to be disarmed');
      await wakes.flush();
      const before = wakes.count(queue);
      expect(before).toBeGreaterThanOrEqual(1);
      expect(before).toBeLessThan(100);

      // while events are pending the queue is never armed: 300 sends, no notification
      const ticks = await lastTick(queue);
      await Promise.all(
        [0, 1, 2].map(async () => {
          for (let i = 0; i < 100; i++) await send(client.pool, queue, { type: 't' });
        }),
      );
      await sendBatch(client.pool, queue, 't', burst);
      await wakes.flush();
      expect(wakes.count(queue)).toBe(before);
      expect(await armed(queue)).toBe(false);
      expect(await lastTick(queue)).toBe(ticks);

      // the thresholds still deliver everything
      await forceTick(client, queue);
      const expected = 100 * 100 + 300 + 100;
      let received = 0;
      // a few batches (the wake-up ticks, the forced one); empty ones finish by themselves
      for (let i = 0; i < 20 && received < expected; i++) {
        const batch = await receive(client.pool, queue, 'c', 100_000);
        received += batch.length;
        if (batch[0]) await ack(client.pool, batch[0].batchId);
      }
      expect(received).toBe(expected);
    } finally {
      await ticker.stop();
      await wakes.close();
    }
  });
});
