import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually } from '../../../../test-support/eventually.js';
import {
  Consumer,
  consumerInfo,
  dlqInspect,
  type Event,
  exponentialRetryDelay,
  type HandlerContext,
  PgqueQueueNotFoundError,
  send,
  sendBatch,
  subscribe,
} from '../../src/index.js';
import { forceTick, latch, memoryLogger, tickedClient } from './support.js';

const { client, newQueue, track } = await tickedClient();

describe('Consumer', () => {
  it('wakes on the tick NOTIFY: handled with no fallback poll due for an hour', async () => {
    const queue = await newQueue({ tickerMaxLag: 100 });
    const logger = memoryLogger();
    const handled: { id: bigint }[] = [];
    const consumer = track(
      new Consumer(client, queue, 'waker', { pollInterval: 3_600_000, logger }).handle(
        'ping',
        (event) => {
          handled.push({ id: event.id });
        },
      ),
    );
    await consumer.start();
    // warm up, then make sure the loop is parked in its wait
    await send(client.pool, queue, { type: 'ping' });
    await eventually(() => handled.length === 1, 'the warm-up event');
    const idleLines = () =>
      logger.lines.filter((l) => l.message === 'idle; waiting for a tick').length;
    const idleBefore = idleLines();
    await eventually(() => idleLines() > idleBefore, 'the consumer to wait');

    // parked with its next poll an hour away: only the NOTIFY can bring this event in
    const id = await send(client.pool, queue, { type: 'ping' });
    const hit = await eventually(() => handled.find((h) => h.id === id), 'the event');
    expect(hit.id).toBe(id);
    await consumer.stop();
  });

  it('gives handlers the parsed event and its context, per event type', async () => {
    const queue = await newQueue();
    const seen: { event: Event<unknown>; context: HandlerContext }[] = [];
    const types: string[] = [];
    const consumer = track(
      new Consumer(client, queue, 'typed')
        .handle('a', (event, context) => {
          seen.push({ event, context });
          types.push('a');
        })
        .handle('b', () => {
          types.push('b');
        }),
    );
    await consumer.start();
    const id = await send(client.pool, queue, { type: 'a', payload: { x: [1, 2] }, extra2: 'two' });
    await send(client.pool, queue, { type: 'b', payload: null });
    await eventually(() => types.length === 2, 'both events');
    expect(types).toEqual(['a', 'b']);
    const { event, context } = seen[0] as (typeof seen)[number];
    expect(event).toMatchObject({ id, type: 'a', payload: { x: [1, 2] }, retryCount: 0 });
    expect(event.extras).toEqual({ extra1: null, extra2: 'two', extra3: null, extra4: null });
    expect(event.createdAt).toBeInstanceOf(Date);
    expect(typeof event.batchId).toBe('bigint');
    expect(context).toMatchObject({ queue, consumer: 'typed', subconsumer: null });
    expect(context.signal.aborted).toBe(false);
    await consumer.stop();
  });

  it('validates payloads with a Standard Schema: the handler gets the output, invalid ones are dead-lettered at once and the loop goes on', async () => {
    const queue = await newQueue();
    const OrderPaid = z.object({ orderId: z.number().int(), currency: z.string().default('EUR') });
    const handled: { orderId: number; currency: string }[] = [];
    const consumer = track(
      new Consumer(client, queue, 'validating').handle('order.paid', OrderPaid, (event) => {
        handled.push(event.payload);
      }),
    );
    await consumer.start();
    await send(client.pool, queue, { type: 'order.paid', payload: { orderId: 1 } });
    const bad = await send(client.pool, queue, { type: 'order.paid', payload: { orderId: 'one' } });
    const { rows } = await client.pool.query(
      `select pgque.send($1, 'order.paid', 'not json'::text) as id`,
      [queue],
    );
    const notJson = rows[0].id as bigint;
    await send(client.pool, queue, {
      type: 'order.paid',
      payload: { orderId: 2, currency: 'USD' },
    });

    const dead = await eventually(async () => {
      const letters = await dlqInspect(client.pool, queue);
      return letters.length === 2 ? letters : undefined;
    }, 'two dead letters');
    const reasons = new Map(dead.map((d) => [d.eventId, d.reason]));
    expect(reasons.get(bad)).toMatch(/^invalid payload for event type order\.paid: orderId: .+/);
    expect(reasons.get(notJson)).toMatch(
      /^invalid payload for event type order\.paid: not valid JSON/,
    );
    // rejected at the first delivery: never retried
    expect(dead.map((d) => d.retryCount ?? 0)).toEqual([0, 0]);
    // later events are still handled
    await send(client.pool, queue, { type: 'order.paid', payload: { orderId: 3 } });
    await eventually(() => handled.length === 3, 'the valid events');
    expect(handled).toEqual([
      { orderId: 1, currency: 'EUR' },
      { orderId: 2, currency: 'USD' },
      { orderId: 3, currency: 'EUR' },
    ]);
    await consumer.stop();
  });

  it('retries a failing handler with back-off, then dead-letters the event with the error', async () => {
    const queue = await newQueue({ maxRetries: 2 });
    const delays: number[] = [];
    const attempts: number[] = [];
    const consumer = track(
      new Consumer(client, queue, 'failing', {
        retryAfter: (retryCount) => {
          delays.push(retryCount);
          return 0;
        },
      }).handle('job', (event) => {
        attempts.push(event.retryCount);
        throw new Error('boom');
      }),
    );
    await consumer.start();
    const id = await send(client.pool, queue, { type: 'job', payload: 1 });
    const [letter] = await eventually(async () => {
      const letters = await dlqInspect(client.pool, queue);
      return letters.length > 0 ? letters : undefined;
    }, 'the dead letter');
    expect(letter).toMatchObject({ eventId: id, reason: 'handler error: boom', retryCount: 2 });
    expect(attempts).toEqual([0, 1, 2]);
    expect(delays).toEqual([0, 1, 2]);
    await consumer.stop();
  });

  it('backs off exponentially by default', () => {
    const delay = exponentialRetryDelay();
    expect([0, 1, 2, 3, 20].map(delay)).toEqual([10, 20, 40, 80, 3_600]);
    const custom = exponentialRetryDelay({ initialSeconds: 1, maxSeconds: 5 });
    expect([0, 1, 2, 3].map(custom)).toEqual([1, 2, 4, 5]);
  });

  it('acks unknown event types silently or nacks them, by policy', async () => {
    const queue = await newQueue({ maxRetries: 0 });
    const known: string[] = [];
    const acking = track(
      new Consumer(client, queue, 'acking', { unknownHandlerPolicy: 'ack' }).handle(
        'known',
        (e) => {
          known.push(`acking:${e.id}`);
        },
      ),
    );
    const nacking = track(
      new Consumer(client, queue, 'nacking').handle('known', (e) => {
        known.push(`nacking:${e.id}`);
      }),
    );
    await acking.start();
    await nacking.start();
    const stranger = await send(client.pool, queue, { type: 'stranger' });
    const id = await send(client.pool, queue, { type: 'known' });
    await eventually(() => known.length === 2, 'the known event at both consumers');
    const [letter] = await eventually(async () => {
      const letters = await dlqInspect(client.pool, queue);
      return letters.length > 0 ? letters : undefined;
    }, 'the dead letter of the nacking consumer');
    expect(letter).toMatchObject({ eventId: stranger, reason: 'unknown event type: stranger' });
    expect(known.sort()).toEqual([`acking:${id}`, `nacking:${id}`].sort());
    // only the nacking consumer dead-lettered it
    expect(await dlqInspect(client.pool, queue)).toHaveLength(1);
    await Promise.all([acking.stop(), nacking.stop()]);
  });

  it('drains a whole batch larger than any default before acking it once', async () => {
    const queue = await newQueue();
    const consumer = new Consumer(client, queue, 'drainer');
    await subscribe(client.pool, queue, 'drainer');
    const ids = await sendBatch(
      client.pool,
      queue,
      'n',
      Array.from({ length: 250 }, (_, i) => i),
    );
    await forceTick(client, queue);
    const batches = new Set<bigint>();
    const seen = new Set<bigint>();
    consumer.handle('n', (event) => {
      batches.add(event.batchId);
      seen.add(event.id);
    });
    track(consumer);
    await consumer.start();
    await eventually(() => seen.size === 250, 'all 250 events');
    expect(batches.size).toBe(1);
    expect([...seen].sort()).toEqual([...ids].sort());
    await eventually(
      async () => (await consumerInfo(client.pool, queue, 'drainer'))[0]?.currentBatch === null,
      'the ack',
    );
    await consumer.stop();
  });

  it('runs at most `concurrency` handlers of a batch at a time', async () => {
    const queue = await newQueue();
    await subscribe(client.pool, queue, 'parallel');
    await sendBatch(
      client.pool,
      queue,
      'n',
      Array.from({ length: 12 }, (_, i) => i),
    );
    await forceTick(client, queue);
    let inFlight = 0;
    let peak = 0;
    let done = 0;
    // every handler waits until released: without the limit all 12 would start at once
    const release = latch();
    const consumer = track(
      new Consumer(client, queue, 'parallel', { concurrency: 3 }).handle('n', async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await release.opened;
        inFlight--;
        done++;
      }),
    );
    await consumer.start();
    await eventually(() => inFlight === 3, 'three handlers running');
    expect(done).toBe(0);
    release.open();
    await eventually(() => done === 12, 'all events');
    expect(peak).toBe(3);
    await consumer.stop();
  });

  it('on stop, finishes the batch in hand before acking it (default)', async () => {
    const queue = await newQueue();
    const gate = latch();
    const started = latch();
    const handled: bigint[] = [];
    const consumer = track(
      new Consumer(client, queue, 'finisher').handle('slow', async (event) => {
        started.open();
        await gate.opened;
        handled.push(event.id);
      }),
    );
    await consumer.start();
    const ids = await sendBatch(client.pool, queue, 'slow', [1, 2]);
    await started.opened;
    const stopped = consumer.stop();
    let stoppedYet = false;
    void stopped.then(() => {
      stoppedYet = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(stoppedYet).toBe(false);
    gate.open();
    await stopped;
    expect(handled).toEqual(ids);
    expect(consumer.running).toBe(false);
    const [info] = await consumerInfo(client.pool, queue, 'finisher');
    expect(info?.currentBatch).toBeNull();
  });

  it("with onStop 'handBack', aborts the handlers and hands unfinished events back for retry", async () => {
    const queue = await newQueue();
    const started = latch();
    const firstRun: bigint[] = [];
    const consumer = track(
      new Consumer(client, queue, 'handback', { onStop: 'handBack' }).handle(
        'slow',
        async (event, context) => {
          if (firstRun.length === 0) {
            firstRun.push(event.id); // the first event completes
            return;
          }
          started.open();
          await new Promise((_, reject) => {
            context.signal.addEventListener('abort', () => reject(context.signal.reason), {
              once: true,
            });
          });
        },
      ),
    );
    await consumer.start();
    const ids = await sendBatch(client.pool, queue, 'slow', [1, 2, 3]);
    await started.opened;
    await consumer.stop();

    const again: Event<unknown>[] = [];
    const next = track(
      new Consumer(client, queue, 'handback').handle('slow', (event) => {
        again.push(event);
      }),
    );
    await next.start();
    await eventually(() => again.length === 2, 'the handed-back events');
    expect(firstRun).toEqual([ids[0]]);
    expect(again.map((e) => e.id).sort()).toEqual([ids[1], ids[2]].sort());
    expect(again.every((e) => e.retryCount === 1)).toBe(true);
    expect(await dlqInspect(client.pool, queue)).toEqual([]);
    await next.stop();
  });

  it('starts and stops idempotently, stops on an AbortSignal, and can start again', async () => {
    const queue = await newQueue();
    const handled: bigint[] = [];
    const consumer = track(
      new Consumer(client, queue, 'lifecycle').handle('t', (e) => {
        handled.push(e.id);
      }),
    );
    const controller = new AbortController();
    const runDone = consumer.run(controller.signal);
    await Promise.all([consumer.start(), consumer.start()]);
    expect(consumer.running).toBe(true);
    const first = await send(client.pool, queue, { type: 't' });
    await eventually(() => handled.includes(first), 'the first event');
    controller.abort();
    await runDone;
    expect(consumer.running).toBe(false);
    await Promise.all([consumer.stop(), consumer.stop()]);

    const second = await send(client.pool, queue, { type: 't' });
    await consumer.start();
    await eventually(() => handled.includes(second), 'the event sent while stopped');
    await consumer.stop();
  });

  it('fails to start on a queue that does not exist, and rejects bad options', async () => {
    const consumer = new Consumer(client, 'no_such_queue_here', 'x');
    await expect(consumer.start()).rejects.toBeInstanceOf(PgqueQueueNotFoundError);
    expect(consumer.running).toBe(false);
    expect(() => new Consumer(client, 'q', 'x', { concurrency: 0 })).toThrow(/concurrency/);
    expect(() => new Consumer(client, 'q', 'x', { onStop: 'later' as never })).toThrow(/onStop/);
    expect(() => new Consumer(client, 'q', '')).toThrow(/consumer name/);
    const typed = new Consumer(client, 'q', 'x').handle('t', () => {});
    expect(() => typed.handle('t', () => {})).toThrow(/already registered/);
    expect(() => typed.handle('u', {} as never, () => {})).toThrow(/Standard Schema/);
  });
});
