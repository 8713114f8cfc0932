// PartitionedConsumer: workers of one partitioned consumer share its slots, each holding
// an equal share, and move slots when a worker joins or leaves; events of one key keep
// their order throughout. Each worker has a client (pool and connections) of its own.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import {
  ackPartitioned,
  type Client,
  claimSlot,
  type HandlerContext,
  PartitionedConsumer,
  PgqueInvalidInputError,
  PgquePartitionIncompleteError,
  PgqueSlotBatchOpenError,
  PgqueSlotCountMismatchError,
  PgqueSlotLeaseLostError,
  PgqueSlotNotFoundError,
  partitionSlotStatus,
  receivePartitioned,
  releaseSlot,
  send,
  sendIdempotent,
  subscribePartitioned,
  subscribeSlot,
  unsubscribeSlot,
} from '../../src/index.js';
import { clientFor, forceTick, tickedClient } from './support.js';

const { client, url, newQueue } = await tickedClient();

// each worker has a client of its own: stopped, then closed, after the file's tests
const workers: { consumer: PartitionedConsumer; client: Client }[] = [];
afterAll(async () => {
  await Promise.all(workers.map((w) => w.consumer.stop()));
  await Promise.all(workers.map((w) => w.client.close().catch(() => {})));
});

interface Seen {
  worker: string;
  key: string;
  seq: number;
  slot: number;
  epoch: bigint;
}

/** A worker of consumer `name`, on a client of its own, recording what it handles into `seen`. */
async function worker(queue: string, name: string, id: string, seen: Seen[], slots = 6) {
  const own = await clientFor(url);
  const consumer = new PartitionedConsumer(own, queue, name, {
    slots,
    worker: id,
    leaseTtl: 4_000, // generous: renewals on a loaded 2-core machine can stall for a second or two
    rebalanceInterval: 100,
    pollInterval: 500,
  }).handle('step', (event, context: HandlerContext) => {
    const payload = event.payload as { key: string; seq: number };
    seen.push({
      worker: id,
      key: payload.key,
      seq: payload.seq,
      slot: context.partition?.slot ?? -1,
      epoch: context.partition?.epoch ?? -1n,
    });
  });
  workers.push({ consumer, client: own });
  return consumer;
}

/** Sends `count` steps for each key, numbered on from `from`. */
async function sendSteps(queue: string, keys: string[], from: number, count: number) {
  for (let seq = from; seq < from + count; seq++) {
    for (const key of keys) {
      await send(client.pool, queue, { type: 'step', payload: { key, seq }, partitionKey: key });
    }
  }
}

function held(workers: PartitionedConsumer[]): number[][] {
  return workers.map((w) => w.heldSlots);
}

describe('PartitionedConsumer', () => {
  it('spreads the slots over the live workers and rebalances as workers join and leave', async () => {
    const queue = await newQueue();
    const keys = Array.from({ length: 12 }, (_, i) => `ticket-${i}`);
    const seen: Seen[] = [];
    const a = await worker(queue, 'notifier', 'a', seen);
    await a.start();
    expect(a.heldSlots).toEqual([0, 1, 2, 3, 4, 5]);
    await sendSteps(queue, keys, 0, 5);
    await eventually(() => seen.length >= 60, 'the first steps');

    const b = await worker(queue, 'notifier', 'b', seen);
    await b.start();
    await eventually(
      () => a.heldSlots.length === 3 && b.heldSlots.length === 3,
      'b to take half of the slots',
    );
    expect([...a.heldSlots, ...b.heldSlots].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    await sendSteps(queue, keys, 5, 5);

    const c = await worker(queue, 'notifier', 'c', seen);
    await c.start();
    await eventually(
      () => held([a, b, c]).every((slots) => slots.length === 2),
      'three workers with two slots each',
    );
    await sendSteps(queue, keys, 10, 5);
    await eventually(() => seen.length >= 180, 'the steps sent to three workers');

    // b leaves: it gives its slots back at once, and a and c take them
    const bSlots = b.heldSlots;
    await b.stop();
    await eventually(
      () => held([a, c]).every((slots) => slots.length === 3),
      'a and c with three slots each',
    );
    const status = await partitionSlotStatus(client.pool, { queue, consumer: 'notifier' });
    expect(status.map((s) => s.leaseOwner).filter((o) => o === 'b')).toEqual([]);
    for (const slot of bSlots) {
      expect(Number(status[slot]?.epoch)).toBeGreaterThanOrEqual(3); // a → b → a or c
    }
    await sendSteps(queue, keys, 15, 5);
    await eventually(() => seen.length >= 240, 'every step');

    // every step handled once, each key in order, each key by one holder at a time
    for (const key of keys) {
      const steps = seen.filter((s) => s.key === key);
      expect(steps.map((s) => s.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(new Set(steps.map((s) => s.slot)).size).toBe(1);
      // a key changes hands only forward: the epochs it was handled under never go back
      const epochs = steps.map((s) => Number(s.epoch));
      expect(epochs).toEqual([...epochs].sort((x, y) => x - y));
    }
    expect(new Set(seen.map((s) => s.worker))).toEqual(new Set(['a', 'b', 'c']));
    await a.stop();
    await c.stop();
    expect(
      (await partitionSlotStatus(client.pool, { queue, consumer: 'notifier' })).map(
        (s) => s.leaseOwner,
      ),
    ).toEqual([null, null, null, null, null, null]);
  });

  it('takes over the slots of a worker that stops renewing, once its leases lapse', async () => {
    const queue = await newQueue();
    const seen: Seen[] = [];
    const a = await worker(queue, 'mailer', 'a', seen, 4);
    const b = await worker(queue, 'mailer', 'b', seen, 4);
    await a.start();
    await b.start();
    await eventually(() => a.heldSlots.length === 2 && b.heldSlots.length === 2, 'two slots each');
    // b's connections go away under it: no renewal reaches the engine any more
    const bClient = workers.find((w) => w.consumer === b)?.client as Client;
    await bClient.pool.end();
    await eventually(() => a.heldSlots.length === 4, 'a to take over every slot', {
      timeoutMs: 30_000,
    });
    const status = await partitionSlotStatus(client.pool, { queue, consumer: 'mailer' });
    expect(status.map((s) => s.leaseOwner)).toEqual(['a', 'a', 'a', 'a']);
    await sendSteps(queue, ['x', 'y', 'z'], 0, 3);
    await eventually(() => seen.length >= 9, 'the steps, all handled by a');
    expect(new Set(seen.map((s) => s.worker))).toEqual(new Set(['a']));
    await a.stop();
    await b.stop();
  });

  it('lets go of a slot whose lease another worker took, and leaves it to that worker', async () => {
    const queue = await newQueue();
    const seen: Seen[] = [];
    const a = await worker(queue, 'fenced', 'a', seen, 1);
    await a.start();
    expect(a.heldSlots).toEqual([0]);
    // the lease lapses (as if a had paused past its TTL) and someone else takes the slot;
    // a renews every 100 ms, so the take may find the lease renewed: age it and try again
    const epoch = await eventually(async () => {
      await client.pool.query(
        `update pgque.partition_slot set ps_lease_until = now() - interval '1 minute'
          where ps_consumer = 'fenced'`,
      );
      return (
        (await claimSlot(client.pool, {
          queue,
          consumer: 'fenced',
          slot: 0,
          worker: 'intruder',
        })) ?? false
      );
    }, 'the intruder to take the lapsed slot');
    expect(epoch).toBe(2n);
    await eventually(() => a.heldSlots.length === 0, 'a to let the slot go');
    // the intruder still holds it: a neither released nor re-took it
    const [slot] = await partitionSlotStatus(client.pool, { queue, consumer: 'fenced' });
    expect([slot?.leaseOwner, slot?.epoch]).toEqual(['intruder', 2n]);
    await a.stop();
  });
});

describe('partition and idempotency statements', () => {
  it('send with a partition key, sendIdempotent, and the errors of the slot calls', async () => {
    const queue = await newQueue();
    expect(await subscribePartitioned(client.pool, queue, 'w', 2)).toBe(2);
    expect(await subscribePartitioned(client.pool, queue, 'w', 2)).toBe(0);
    await expect(subscribePartitioned(client.pool, queue, 'w', 3)).rejects.toBeInstanceOf(
      PgqueSlotCountMismatchError,
    );
    const first = await sendIdempotent(client.pool, queue, {
      type: 'step',
      payload: { n: 1 },
      idemKey: 'msg-1@example.org',
      partitionKey: 'k',
    });
    expect(first.deduped).toBe(false);
    expect(
      await sendIdempotent(client.pool, queue, {
        type: 'step',
        payload: 2,
        idemKey: 'msg-1@example.org',
      }),
    ).toEqual({ eventId: first.eventId, deduped: true });
    await expect(
      send(client.pool, queue, { partitionKey: 'k', extra1: 'also' }),
    ).rejects.toBeInstanceOf(PgqueInvalidInputError);
    await expect(sendIdempotent(client.pool, queue, { idemKey: '' })).rejects.toBeInstanceOf(
      PgqueInvalidInputError,
    );
    await forceTick(client, queue);

    const holder = { queue, consumer: 'w', slot: 0, slots: 2, worker: 'me' };
    const lost = await receivePartitioned(client.pool, holder).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(PgqueSlotLeaseLostError);
    expect((lost as PgqueSlotLeaseLostError).target).toEqual({
      queue,
      consumer: 'w',
      slot: 0,
      worker: 'me',
    });
    expect((lost as PgqueSlotLeaseLostError).sqlState).toBe('P0001');
    const keySlot = Number(
      (await client.pool.query(`select (((hashtextextended('k', 0) % 2) + 2) % 2)::int as s`))
        .rows[0].s,
    );
    const mine = { ...holder, slot: keySlot };
    expect(await claimSlot(client.pool, mine, { ttl: 5_000 })).toBe(1n);
    const got = await receivePartitioned(client.pool, mine, 1000);
    expect(got.map((m) => [m.msgId, m.extra1])).toEqual([[first.eventId, 'k']]);
    await expect(releaseSlot(client.pool, mine)).rejects.toBeInstanceOf(PgqueSlotBatchOpenError);
    expect(await ackPartitioned(client.pool, mine)).toBe(1);
    expect(await releaseSlot(client.pool, mine)).toBe(true);
    await expect(claimSlot(client.pool, { ...holder, consumer: 'nobody' })).rejects.toBeInstanceOf(
      PgqueSlotNotFoundError,
    );
    await expect(claimSlot(client.pool, holder, { ttl: 10 })).rejects.toBeInstanceOf(
      PgqueInvalidInputError,
    );
    expect(await unsubscribeSlot(client.pool, queue, 'w', 1)).toBe(1);
    await expect(subscribePartitioned(client.pool, queue, 'w', 2)).rejects.toBeInstanceOf(
      PgquePartitionIncompleteError,
    );
    expect(await subscribeSlot(client.pool, queue, 'w', 1, 2)).toBe(1);
  });
});
