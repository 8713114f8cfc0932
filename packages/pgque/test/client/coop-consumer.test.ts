import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import {
  ack,
  CoopConsumer,
  type CoopConsumerOptions,
  consumerInfo,
  defaultSubconsumer,
  receiveCoop,
  send,
  sendBatch,
  subscribeSubconsumer,
} from '../../src/index.js';
import { latch, memoryLogger, tickedClient } from './support.js';

const { client, newQueue, track } = await tickedClient();

function member(
  queue: string,
  subconsumer: string,
  options: CoopConsumerOptions = {},
): CoopConsumer {
  return track(new CoopConsumer(client, queue, 'grp', { subconsumer, ...options }));
}

async function members(queue: string): Promise<string[]> {
  return (await consumerInfo(client.pool, queue))
    .map((c) => c.consumerName)
    .filter((n) => n.includes('.'));
}

describe('CoopConsumer', () => {
  it('names itself <hostname>-<pid> by default', () => {
    const consumer = new CoopConsumer(client, 'q', 'grp');
    expect(consumer.subconsumer).toBe(defaultSubconsumer());
    expect(consumer.subconsumer).toBe(`${os.hostname().replaceAll('.', '-')}-${process.pid}`);
    expect(() => new CoopConsumer(client, 'q', 'g.x')).toThrow(/must not contain a dot/);
    expect(() => new CoopConsumer(client, 'q', 'g', { subconsumer: 'a.b' })).toThrow(
      /must not contain a dot/,
    );
  });

  it('splits the batches between members: every event handled once', async () => {
    const queue = await newQueue();
    const byMember = new Map<string, bigint[]>();
    // a member's first batch stays in hand until both members hold one, so the second
    // window can only go to the member that is not busy
    const bothBusy = latch();
    const make = (name: string) =>
      member(queue, name).handle('work', async (event, context) => {
        const list = byMember.get(context.subconsumer as string) ?? [];
        list.push(event.id);
        byMember.set(context.subconsumer as string, list);
        if (byMember.size === 2) bothBusy.open();
        await bothBusy.opened;
      });
    const a = make('a');
    const b = make('b');
    await Promise.all([a.start(), b.start()]);
    expect((await members(queue)).sort()).toEqual(['grp.a', 'grp.b']);

    const all = () => [...byMember.values()].flat();
    const sent: bigint[] = [...(await sendBatch(client.pool, queue, 'work', [0, 0]))];
    await eventually(() => byMember.size === 1, 'the first window in one member');
    for (let i = 1; i < 20; i++)
      sent.push(...(await sendBatch(client.pool, queue, 'work', [i, i])));
    await eventually(() => all().length >= sent.length, 'every event');
    expect(all().sort()).toEqual([...sent].sort());
    expect(new Set(all()).size).toBe(all().length);
    expect([...byMember.keys()].sort()).toEqual(['a', 'b']);
    await Promise.all([a.stop(), b.stop()]);
    expect(await members(queue)).toEqual([]);
  });

  it('keeps its batch with heartbeats while a handler outlives deadInterval', async () => {
    const queue = await newQueue();
    const gate = latch();
    const started = latch();
    const seenByB: bigint[] = [];
    // heartbeats every ~333 ms against a dead interval of 1 s: a wide margin under load
    const a = member(queue, 'a', { deadInterval: 1_000 }).handle('slow', async () => {
      started.open();
      await gate.opened;
    });
    const bLog = memoryLogger();
    const bFetches = () =>
      bLog.lines.filter((line) => line.message === 'idle; waiting for a tick').length;
    const b = member(queue, 'b', { deadInterval: 1_000, pollInterval: 50, logger: bLog }).handle(
      'slow',
      (event) => {
        seenByB.push(event.id);
      },
    );
    await a.start();
    await send(client.pool, queue, { type: 'slow' });
    await started.opened;
    await b.start();
    // b asks every 50 ms; a holds its batch for 2.5 dead intervals
    const holder = await eventually(async () => {
      const row = (await consumerInfo(client.pool, queue, 'grp.a'))[0];
      return row?.currentBatch ?? undefined;
    }, "a's batch");
    // the engine's own clock: a's batch is older than 2.5 dead intervals (its cursor tick
    // is), and b asked for work at least three times since then
    await eventually(
      async () => ((await consumerInfo(client.pool, queue, 'grp.a'))[0]?.lagMs ?? 0) > 2_500,
      'two and a half dead intervals',
      { intervalMs: 100 },
    );
    const asked = bFetches();
    await eventually(() => bFetches() >= asked + 3, 'three more requests of b');
    expect((await consumerInfo(client.pool, queue, 'grp.a'))[0]?.currentBatch).toBe(holder);
    expect(seenByB).toEqual([]);
    gate.open();
    await eventually(
      async () => (await consumerInfo(client.pool, queue, 'grp.a'))[0]?.currentBatch === null,
      'the ack',
    );
    expect(seenByB).toEqual([]);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('loses its batch to another member without heartbeats (the control case)', async () => {
    const queue = await newQueue();
    const gate = latch();
    const started = latch();
    const seenByB: bigint[] = [];
    const a = member(queue, 'a', { deadInterval: 400, heartbeatInterval: 60_000 }).handle(
      'slow',
      async () => {
        started.open();
        await gate.opened;
      },
    );
    const b = member(queue, 'b', { deadInterval: 400, pollInterval: 50 }).handle(
      'slow',
      (event) => {
        seenByB.push(event.id);
      },
    );
    await a.start();
    const id = await send(client.pool, queue, { type: 'slow' });
    await started.opened;
    await b.start();
    await eventually(() => seenByB.includes(id), 'the takeover by b');
    gate.open();
    await Promise.all([a.stop(), b.stop()]);
  });

  it('takes over the batch of a member that died holding it', async () => {
    const queue = await newQueue();
    await subscribeSubconsumer(client.pool, queue, 'grp', 'dead');
    const ids = await sendBatch(client.pool, queue, 'work', [1, 2]);
    const held = await eventually(async () => {
      const got = await receiveCoop(client.pool, queue, 'grp', 'dead');
      return got.length > 0 ? got : undefined;
    }, 'the dead member to hold a batch');
    expect(held.map((m) => m.msgId)).toEqual(ids);
    const seen: bigint[] = [];
    const live = member(queue, 'live', { deadInterval: 300, pollInterval: 100 }).handle(
      'work',
      (event) => {
        seen.push(event.id);
      },
    );
    await live.start();
    await eventually(() => seen.length === 2, 'the takeover');
    expect(seen).toEqual(ids);
    expect(await ack(client.pool, held[0]?.batchId as bigint)).toBe(0);
    await live.stop();
  });

  it("on a graceful stop with 'handBack', another member receives the batch's events at once", async () => {
    const queue = await newQueue();
    const started = latch();
    const aDone: bigint[] = [];
    const bSeen: { id: bigint; retryCount: number }[] = [];
    const a = member(queue, 'a', { onStop: 'handBack', deadInterval: 60_000 }).handle(
      'job',
      async (event, context) => {
        if (aDone.length === 0) {
          aDone.push(event.id);
          return;
        }
        started.open();
        await new Promise((_, reject) =>
          context.signal.addEventListener('abort', () => reject(new Error('stopping')), {
            once: true,
          }),
        );
      },
    );
    // an hour of dead interval and fallback poll: neither can bring b the events
    const b = member(queue, 'b', { deadInterval: 3_600_000, pollInterval: 3_600_000 }).handle(
      'job',
      (event) => {
        bSeen.push({ id: event.id, retryCount: event.retryCount });
      },
    );
    await a.start();
    const ids = await sendBatch(client.pool, queue, 'job', [1, 2, 3]);
    await started.opened;
    await b.start();

    await a.stop();
    expect(await members(queue)).toEqual(['grp.b']);
    await eventually(() => bSeen.length === 2, "b receiving a's unfinished events");
    expect(aDone).toEqual([ids[0]]);
    expect(bSeen.map((s) => s.id).sort()).toEqual([ids[1], ids[2]].sort());
    expect(bSeen.every((s) => s.retryCount === 1)).toBe(true);
    await b.stop();
  });

  it("on a graceful stop with 'finish', completes the batch, then leaves the group", async () => {
    const queue = await newQueue();
    const gate = latch();
    const started = latch();
    const aDone: bigint[] = [];
    const bSeen: bigint[] = [];
    const a = member(queue, 'a').handle('job', async (event) => {
      started.open();
      await gate.opened;
      aDone.push(event.id);
    });
    const b = member(queue, 'b').handle('job', (event) => {
      bSeen.push(event.id);
    });
    await a.start();
    const ids = await sendBatch(client.pool, queue, 'job', [1, 2]);
    await started.opened;
    await b.start();
    const stopping = a.stop();
    gate.open();
    await stopping;
    expect(aDone).toEqual(ids);
    expect(await members(queue)).toEqual(['grp.b']);
    const later = await send(client.pool, queue, { type: 'job' });
    await eventually(() => bSeen.includes(later), 'b handling new work');
    expect(bSeen).toEqual([later]);
    await b.stop();
  });

  it('unregisters on an AbortSignal', async () => {
    const queue = await newQueue();
    const controller = new AbortController();
    const a = member(queue, 'a');
    const done = a.run(controller.signal);
    await eventually(async () => (await members(queue)).includes('grp.a'), 'registration');
    controller.abort();
    await done;
    expect(await members(queue)).toEqual([]);
  });
});
