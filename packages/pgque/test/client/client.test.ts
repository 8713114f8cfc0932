import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import {
  ack,
  type Client,
  connect,
  consumerInfo,
  createQueue,
  dlqInspect,
  dlqPurge,
  dlqReplay,
  dlqReplayAll,
  dropQueue,
  forceNextTick,
  maint,
  maintRetryEvents,
  nack,
  PgqueBatchNotFoundError,
  PgqueConnectionError,
  PgqueConsumerNotFoundError,
  PgqueConsumerStateError,
  PgqueDeadLetterNotFoundError,
  PgqueInvalidInputError,
  PgqueQueueNotFoundError,
  queueInfo,
  receive,
  receiveCoop,
  send,
  sendBatch,
  setQueueConfig,
  settle,
  subscribe,
  subscribeSubconsumer,
  ticker,
  tickerAll,
  touchSubconsumer,
  unsubscribe,
  unsubscribeSubconsumer,
} from '../../src/index.js';
import { ticksPending } from '../../src/statements/consume.js';
import { clientFor, forceTick } from './support.js';

let url: string;
let pool: pg.Pool;
let client: Client;

beforeAll(async () => {
  const db = await createTestDatabase();
  url = db.url;
  pool = db.pool;
  client = await clientFor(url);
});

afterAll(async () => {
  await client.close();
});

async function queueWithConsumer(consumer = 'c1'): Promise<string> {
  const queue = randomName();
  await createQueue(client.pool, queue);
  await subscribe(client.pool, queue, consumer);
  return queue;
}

describe('connect', () => {
  it('probes the connection and reports an unreachable server as a connection error', async () => {
    const port = await freePort();
    const failure = await connect(`postgres://nobody:x@127.0.0.1:${port}/none`).catch((e) => e);
    expect(failure).toBeInstanceOf(PgqueConnectionError);
    expect(failure.code).toBe('PGQUE_ERR_CONNECTION');
  });

  it('rejects a missing URL before trying to connect', async () => {
    await expect(connect('')).rejects.toBeInstanceOf(PgqueInvalidInputError);
    await expect(connect(null as never)).rejects.toThrow(/database URL or pool options/);
  });

  it('accepts pool options as well as a URL, and close is idempotent', async () => {
    const other = await connect({ connectionString: url, max: 2 });
    expect(await tickerAll(other.pool)).toBeTypeOf('number');
    await other.close();
    await other.close();
  });

  it('parses int8 as bigint on its own pool without touching the global pg.types', async () => {
    const globalBefore = pg.types.getTypeParser(20, 'text');
    const other = await connect(url);
    const queue = randomName();
    await createQueue(other.pool, queue);
    const id = await send(other.pool, queue, { payload: 1 });
    expect(typeof id).toBe('bigint');
    const { rows } = await other.pool.query(
      'select 9007199254740993::int8 as big, array[1,2]::int8[] as arr',
    );
    expect(rows[0].big).toBe(9007199254740993n);
    expect(rows[0].arr).toEqual([1n, 2n]);
    expect(pg.types.getTypeParser(20, 'text')).toBe(globalBefore);
    // a plain pool still gets node-postgres' defaults
    const plain = await pool.query('select 9007199254740993::int8 as big');
    expect(plain.rows[0].big).toBe('9007199254740993');
    await other.close();
  });
});

describe('queues', () => {
  it('creates a queue with settings in one call, reports them, and changes them', async () => {
    const queue = randomName();
    expect(await createQueue(client.pool, queue, { tickerMaxLag: 100, maxRetries: 2 })).toBe(1);
    expect(await createQueue(client.pool, queue)).toBe(0);
    let info = await queueInfo(client.pool, queue);
    expect(info?.queueName).toBe(queue);
    expect(info?.tickerMaxLagMs).toBe(100);
    expect(info?.tickerMaxCount).toBe(500);
    expect(typeof info?.lastTickId).toBe('bigint');

    await setQueueConfig(client.pool, queue, {
      tickerMaxCount: 7,
      tickerIdlePeriod: '2 seconds',
      tickerMaxLag: null,
    });
    info = await queueInfo(client.pool, queue);
    expect(info?.tickerMaxCount).toBe(7);
    expect(info?.tickerIdlePeriodMs).toBe(2_000);
    expect(info?.tickerMaxLagMs).toBe(3_000);

    const all = await queueInfo(client.pool);
    expect(all.map((q) => q.queueName)).toContain(queue);
    expect(await queueInfo(client.pool, 'no_such_queue_here')).toBeNull();
  });

  it('rejects bad settings before any query, and reports server-side refusals as invalid input', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue);
    await expect(setQueueConfig(client.pool, queue, { tickerMaxCount: 0 })).rejects.toBeInstanceOf(
      PgqueInvalidInputError,
    );
    await expect(setQueueConfig(client.pool, queue, { nonsense: 1 } as never)).rejects.toThrow(
      /unknown queue setting/,
    );
    await expect(
      setQueueConfig(client.pool, queue, { tickerMaxLag: 'soon' }),
    ).rejects.toBeInstanceOf(PgqueInvalidInputError);
    await expect(createQueue(client.pool, 'x'.repeat(58))).rejects.toThrow(/at most 57/);
    await expect(
      setQueueConfig(client.pool, 'no_such_queue_here', { maxRetries: 1 }),
    ).rejects.toBeInstanceOf(PgqueQueueNotFoundError);
  });

  it('drops a queue, refusing while consumers are attached unless forced', async () => {
    const queue = await queueWithConsumer();
    await expect(dropQueue(client.pool, queue)).rejects.toBeInstanceOf(PgqueConsumerStateError);
    expect(await dropQueue(client.pool, queue, { force: true })).toBe(1);
    expect(await queueInfo(client.pool, queue)).toBeNull();
    await expect(dropQueue(client.pool, queue)).rejects.toBeInstanceOf(PgqueQueueNotFoundError);
  });
});

describe('producing and consuming', () => {
  it('sends, ticks, receives and acks, with every field of the message', async () => {
    const queue = await queueWithConsumer();
    const id = await send(client.pool, queue, {
      type: 'order.paid',
      payload: { order: 7, note: 'ü' },
      extra1: 'e1',
      extra4: 'e4',
    });
    const plain = await send(client.pool, queue, { payload: [1, 2] });
    const undefinedPayload = await send(client.pool, queue);
    await forceTick(client, queue);

    const messages = await receive(client.pool, queue, 'c1');
    expect(messages.map((m) => m.msgId)).toEqual([id, plain, undefinedPayload]);
    const [first, second, third] = messages;
    expect(first).toMatchObject({
      type: 'order.paid',
      payload: '{"order":7,"note":"ü"}',
      retryCount: null,
      extra1: 'e1',
      extra2: null,
      extra4: 'e4',
    });
    expect(first?.createdAt).toBeInstanceOf(Date);
    expect(second?.type).toBe('default');
    expect(third?.payload).toBe('null');

    const batchId = first?.batchId as bigint;
    expect(messages.every((m) => m.batchId === batchId)).toBe(true);
    expect(await ack(client.pool, batchId)).toBe(1);
    expect(await ack(client.pool, batchId)).toBe(0);
    expect(await receive(client.pool, queue, 'c1')).toEqual([]);
  });

  it('sends a batch of payloads with ids aligned to the input', async () => {
    const queue = await queueWithConsumer();
    const ids = await sendBatch(client.pool, queue, 'bulk', [{ n: 1 }, { n: 2 }, null]);
    expect(ids).toHaveLength(3);
    expect(ids.every((id) => typeof id === 'bigint')).toBe(true);
    expect(await sendBatch(client.pool, queue, 'bulk', [])).toEqual([]);
    await forceTick(client, queue);
    const messages = await receive(client.pool, queue, 'c1', 1000);
    const byId = new Map(messages.map((m) => [m.msgId, m.payload]));
    expect(ids.map((id) => byId.get(id))).toEqual(['{"n":1}', '{"n":2}', 'null']);
  });

  it('limits a receive to maxMessages and reopens the batch until it is acked', async () => {
    const queue = await queueWithConsumer();
    await sendBatch(client.pool, queue, 't', [1, 2, 3]);
    await forceTick(client, queue);
    const firstTwo = await receive(client.pool, queue, 'c1', 2);
    expect(firstTwo).toHaveLength(2);
    const again = await receive(client.pool, queue, 'c1', 100);
    expect(again).toHaveLength(3);
    expect(again[0]?.batchId).toBe(firstTwo[0]?.batchId);
  });

  it("writes an event in the caller's own transaction: rolled back means never sent", async () => {
    const queue = await queueWithConsumer();
    const own = new pg.Client({ connectionString: url }); // default parsers: int8 as text
    await own.connect();
    try {
      await own.query('begin');
      await send(own, queue, { type: 'lost', payload: 1 });
      await own.query('rollback');

      await own.query('begin');
      const id = await send(own, queue, { type: 'kept', payload: 2 });
      const ids = await sendBatch(own, queue, 'kept.batch', [3]);
      expect(typeof id).toBe('bigint');
      expect(typeof ids[0]).toBe('bigint');
      // not visible to a tick before commit
      await forceTick(client, queue);
      expect(await receive(client.pool, queue, 'c1')).toEqual([]);
      await own.query('commit');
    } finally {
      await own.end();
    }
    await forceTick(client, queue);
    const messages = await receive(client.pool, queue, 'c1');
    expect(messages.map((m) => m.type)).toEqual(['kept', 'kept.batch']);
  });

  it('validates arguments on the client with messages that name them', async () => {
    await expect(send(client.pool, '', { payload: 1 })).rejects.toThrow(
      /send: queue must be a non-empty string/,
    );
    await expect(send(client.pool, 'q', { payload: 10n })).rejects.toThrow(
      /payload is not JSON-serialisable/,
    );
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(send(client.pool, 'q', { payload: circular })).rejects.toBeInstanceOf(
      PgqueInvalidInputError,
    );
    await expect(send(client.pool, 'q', { type: 5 as never })).rejects.toThrow(
      /type must be a string/,
    );
    await expect(sendBatch(client.pool, 'q', 't', 'x' as never)).rejects.toThrow(
      /payloads must be an array/,
    );
    await expect(receive(client.pool, 'q', 'c', 0)).rejects.toThrow(
      /maxMessages must be an integer/,
    );
    await expect(receive(client.pool, 'q', '')).rejects.toMatchObject({ field: 'consumer' });
    await expect(ack(client.pool, -1n)).rejects.toThrow(/batchId must be a non-negative bigint/);
    await expect(nack(client.pool, 1n, { msgId: 1n }, { retryAfter: -1 })).rejects.toThrow(
      /retryAfter/,
    );
    await expect(receiveCoop(client.pool, 'q', 'a.b', 's')).rejects.toThrow(
      /consumer must not contain a dot/,
    );
    await expect(receiveCoop(client.pool, 'q', 'a', 's', { deadInterval: -5 })).rejects.toThrow(
      /deadInterval/,
    );
    await expect(
      unsubscribeSubconsumer(client.pool, 'q', 'a', 's', { batchHandling: 2 as never }),
    ).rejects.toThrow(/batchHandling must be 0 or 1/);
  });

  it('maps server errors to the catalogue', async () => {
    const queue = await queueWithConsumer();
    await expect(send(client.pool, 'no_such_queue_here', { payload: 1 })).rejects.toBeInstanceOf(
      PgqueQueueNotFoundError,
    );
    const notSubscribed = await receive(client.pool, queue, 'stranger').catch((e) => e);
    expect(notSubscribed).toBeInstanceOf(PgqueConsumerNotFoundError);
    expect(notSubscribed.code).toBe('PGQUE_ERR_CONSUMER_NOT_FOUND');
    const stale = await nack(client.pool, 123456789n, { msgId: 1n }).catch((e) => e);
    expect(stale).toBeInstanceOf(PgqueBatchNotFoundError);
    expect(stale.batchId).toBe(123456789n);
    expect(await ack(client.pool, 123456789n)).toBe(0);
  });
});

describe('subscriptions', () => {
  it('subscribes and unsubscribes, with the engine’s return values', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue);
    expect(await subscribe(client.pool, queue, 'c')).toBe(1);
    expect(await subscribe(client.pool, queue, 'c')).toBe(0);
    const [info] = await consumerInfo(client.pool, queue, 'c');
    expect(info).toMatchObject({ queueName: queue, consumerName: 'c', currentBatch: null });
    expect(typeof info?.lastTick).toBe('bigint');
    expect(info?.lagMs).toBeTypeOf('number');
    expect((await consumerInfo(client.pool)).some((c) => c.queueName === queue)).toBe(true);
    expect(await unsubscribe(client.pool, queue, 'c')).toBe(1);
    expect(await unsubscribe(client.pool, queue, 'c')).toBe(0);
    expect(await consumerInfo(client.pool, queue)).toEqual([]);
  });
});

describe('retries and dead letters', () => {
  it('nacks an event for a retry that comes back with retryCount 1', async () => {
    const queue = await queueWithConsumer();
    const id = await send(client.pool, queue, { type: 't', payload: 'x' });
    await ticker(client.pool, queue);
    const [message] = await receive(client.pool, queue, 'c1');
    if (!message) throw new Error('no message');
    await nack(client.pool, message.batchId, message, { retryAfter: 0 });
    expect(await ack(client.pool, message.batchId)).toBe(1);
    expect(await maintRetryEvents(client.pool)).toBe(1);
    await forceTick(client, queue);
    const [retried] = await receive(client.pool, queue, 'c1');
    expect(retried?.msgId).toBe(id);
    expect(retried?.retryCount).toBe(1);
  });

  it('dead-letters at max_retries with the reason, then inspects, replays and purges', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue, { maxRetries: 0 });
    await subscribe(client.pool, queue, 'c1');
    await sendBatch(client.pool, queue, 'bad', [{ n: 1 }, { n: 2 }]);
    await forceTick(client, queue);
    const messages = await receive(client.pool, queue, 'c1');
    expect(messages).toHaveLength(2);
    const batchId = messages[0]?.batchId as bigint;
    expect(
      await settle(
        client.pool,
        batchId,
        messages.map((message) => ({ message, retryAfter: 0, reason: 'cannot handle' })),
      ),
    ).toBe(1);

    const dead = await dlqInspect(client.pool, queue);
    expect(dead).toHaveLength(2);
    expect(dead.every((d) => d.reason === 'cannot handle' && d.type === 'bad')).toBe(true);
    expect(dead.map((d) => d.eventId).sort()).toEqual(messages.map((m) => m.msgId).sort());
    expect(typeof dead[0]?.id).toBe('bigint');
    expect(await dlqInspect(client.pool, queue, 1)).toHaveLength(1);

    const newId = await dlqReplay(client.pool, dead[0]?.id as bigint);
    expect(typeof newId).toBe('bigint');
    expect(await dlqInspect(client.pool, queue)).toHaveLength(1);
    await forceTick(client, queue);
    const replayed = await receive(client.pool, queue, 'c1');
    expect(replayed.map((m) => m.msgId)).toEqual([newId]);
    expect(await dlqReplay(client.pool, dead[0]?.id as bigint).catch((e) => e)).toBeInstanceOf(
      PgqueDeadLetterNotFoundError,
    );

    expect(await dlqPurge(client.pool, queue, 0)).toBe(1);
    expect(await dlqReplayAll(client.pool, queue)).toEqual({
      replayed: 0,
      failed: 0,
      firstError: null,
    });
  });

  it('settles nacks and ack atomically; a second settle of the same batch finds it gone', async () => {
    const queue = await queueWithConsumer();
    await sendBatch(client.pool, queue, 't', [1, 2]);
    await forceTick(client, queue);
    const [first] = await receive(client.pool, queue, 'c1');
    if (!first) throw new Error('no message');
    expect(
      await settle(client.pool, first.batchId, [
        { message: first, retryAfter: 30, reason: 'later' },
      ]),
    ).toBe(1);
    await expect(settle(client.pool, first.batchId, [{ message: first }])).rejects.toBeInstanceOf(
      PgqueBatchNotFoundError,
    );
    expect(await settle(client.pool, first.batchId)).toBe(0);
    const retries = await pool.query(
      'select count(*)::int as n from pgque.retry_queue r join pgque.queue q on q.queue_id = r.ev_queue where q.queue_name = $1',
      [queue],
    );
    expect(retries.rows[0].n).toBe(1);
  });

  it('replays every dead letter at once', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue, { maxRetries: 0 });
    await subscribe(client.pool, queue, 'c1');
    await sendBatch(client.pool, queue, 't', [1, 2, 3]);
    await forceTick(client, queue);
    const messages = await receive(client.pool, queue, 'c1');
    await settle(
      client.pool,
      messages[0]?.batchId as bigint,
      messages.map((message) => ({ message })),
    );
    expect(await dlqReplayAll(client.pool, queue)).toEqual({
      replayed: 3,
      failed: 0,
      firstError: null,
    });
  });
});

describe('cooperative members', () => {
  it('registers, receives, heartbeats and unregisters members', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue);
    expect(await subscribeSubconsumer(client.pool, queue, 'grp', 'w1')).toBe(1);
    expect(await subscribeSubconsumer(client.pool, queue, 'grp', 'w1')).toBe(0);
    expect(await touchSubconsumer(client.pool, queue, 'grp', 'w1')).toBe(1);
    expect(await touchSubconsumer(client.pool, queue, 'grp', 'ghost')).toBe(0);

    await sendBatch(client.pool, queue, 't', [1, 2]);
    await forceTick(client, queue);
    const got = await receiveCoop(client.pool, queue, 'grp', 'w1');
    expect(got).toHaveLength(2);
    // w2 sees nothing: the only window belongs to w1
    expect(await receiveCoop(client.pool, queue, 'grp', 'w2')).toEqual([]);
    const members = await consumerInfo(client.pool, queue);
    expect(members.find((m) => m.consumerName === 'grp.w1')?.currentBatch).toBe(got[0]?.batchId);

    await expect(unsubscribeSubconsumer(client.pool, queue, 'grp', 'w1')).rejects.toBeInstanceOf(
      PgqueConsumerStateError,
    );
    expect(
      await unsubscribeSubconsumer(client.pool, queue, 'grp', 'w1', { batchHandling: 1 }),
    ).toBe(1);
    expect(
      await unsubscribeSubconsumer(client.pool, queue, 'grp', 'w1', { batchHandling: 1 }),
    ).toBe(0);
    expect(await ack(client.pool, got[0]?.batchId as bigint)).toBe(0);
    expect(await unsubscribeSubconsumer(client.pool, queue, 'grp', 'w2')).toBe(1);
  });

  it('lets a member take over the batch of a silent one after deadInterval', async () => {
    const queue = randomName();
    await createQueue(client.pool, queue);
    await subscribeSubconsumer(client.pool, queue, 'grp', 'w1');
    await send(client.pool, queue, { payload: 1 });
    await ticker(client.pool, queue);
    const held = await receiveCoop(client.pool, queue, 'grp', 'w1', { maxMessages: 10 });
    await pool.query(
      `update pgque.subscription s set sub_active = now() - interval '1 hour'
         from pgque.consumer c where c.co_id = s.sub_consumer and c.co_name = 'grp.w1'`,
    );
    const taken = await receiveCoop(client.pool, queue, 'grp', 'w2', { deadInterval: '1 minute' });
    expect(taken.map((m) => m.msgId)).toEqual(held.map((m) => m.msgId));
    expect(taken[0]?.batchId).not.toBe(held[0]?.batchId);
    expect(await ack(client.pool, held[0]?.batchId as bigint)).toBe(0);
    expect(await ack(client.pool, taken[0]?.batchId as bigint)).toBe(1);
  });

  it('converts a normal consumer into a group only when asked', async () => {
    const queue = await queueWithConsumer('grp');
    await expect(subscribeSubconsumer(client.pool, queue, 'grp', 'w1')).rejects.toThrow(
      /already a normal consumer/,
    );
    expect(
      await subscribeSubconsumer(client.pool, queue, 'grp', 'w1', { convertNormal: true }),
    ).toBe(1);
  });
});

describe('ticking', () => {
  it('ticks one queue, all queues, and forces the next tick', async () => {
    const queue = await queueWithConsumer();
    // the first call after create_queue ticks (no earlier tick to back off from) …
    const first = await ticker(client.pool, queue);
    expect(typeof first).toBe('bigint');
    // … and an idle queue then waits at least max_lag/2 before its next tick
    expect(await ticker(client.pool, queue)).toBeNull();
    const before = (await queueInfo(client.pool, queue))?.lastTickId as bigint;
    expect(before).toBe(first);
    const newest = await forceNextTick(client.pool, queue);
    expect(newest).toBe(before);
    const tick = await ticker(client.pool, queue);
    expect(tick).toBe(before + 1n);
    await forceNextTick(client.pool, queue);
    expect(await tickerAll(client.pool)).toBeGreaterThanOrEqual(1);
    await expect(ticker(client.pool, 'no_such_queue_here')).rejects.toBeInstanceOf(
      PgqueQueueNotFoundError,
    );
    await expect(forceNextTick(client.pool, 'no_such_queue_here')).rejects.toBeInstanceOf(
      PgqueQueueNotFoundError,
    );
    await maint(client.pool);
  });

  it('calls onTick listeners on the NOTIFY of each tick', async () => {
    const queue = await queueWithConsumer();
    let calls = 0;
    const off = await client.onTick(queue, () => {
      calls++;
    });
    await forceTick(client, queue);
    await eventually(() => calls >= 1, 'a tick notification');
    await off();
    const seen = calls;
    await forceTick(client, queue);
    // an unrelated listener on the same channel proves the NOTIFY went out after off()
    let other = 0;
    const offOther = await client.onTick(queue, () => {
      other++;
    });
    await forceTick(client, queue);
    await eventually(() => other >= 1, 'the second listener');
    expect(calls).toBe(seen);
    await offOther();
  });
});

describe('ticksPending', () => {
  it('says whether a consumer is behind the newest tick, as get_consumer_info and get_queue_info say', async () => {
    const queue = await queueWithConsumer();
    const pending = async (consumer = 'c1', name = queue) => {
      const { rows } = await pool.query(
        `select (select c.last_tick from pgque.get_consumer_info($1, $2) c limit 1)
                < (select q.last_tick_id from pgque.get_queue_info($1) q) as pending`,
        [name, consumer],
      );
      const answer = await ticksPending(client.pool, name, consumer);
      expect(answer).toBe(rows[0]?.pending === true);
      return answer;
    };
    await forceTick(client, queue);
    expect(await pending()).toBe(true);
    const first = await receive(client.pool, queue, 'c1');
    expect(first).toEqual([]); // an empty window, finished by the engine
    expect(await pending()).toBe(false);
    await send(client.pool, queue, { payload: { n: 1 } });
    await forceTick(client, queue);
    expect(await pending()).toBe(true);
    const messages = await receive(client.pool, queue, 'c1');
    expect(messages).toHaveLength(1);
    // a batch being read: the cursor moves at its ack
    expect(await pending()).toBe(true);
    await ack(client.pool, messages[0]?.batchId as bigint);
    expect(await pending()).toBe(false);
    expect(await pending('nobody')).toBe(false);
    expect(await pending('c1', 'no_such_queue')).toBe(false);
  });
});
