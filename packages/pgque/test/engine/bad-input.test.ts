// Bad input answers with the spec's error texts (clients match on them) and leaves no
// partial state behind.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  collectNotices,
  createQueue,
  expectError,
  receive,
  send,
  subscribe,
  tick,
  ticker,
  value,
  withClient,
} from './helpers.js';

const { pool, url } = await createTestDatabase();

/** Counts of everything a failed call could have left behind. */
async function state() {
  const { rows } = await pool.query(`
    select (select count(*) from pgque.queue) as queues,
           (select count(*) from pgque.consumer) as consumers,
           (select count(*) from pgque.subscription) as subscriptions,
           (select count(*) from pgque.subscription where sub_batch is not null) as open_batches,
           (select count(*) from pgque.tick) as ticks,
           (select count(*) from pgque.retry_queue) as retries,
           (select count(*) from pgque.dead_letter) as dead,
           (select count(*) from pg_class where relnamespace = 'pgque'::regnamespace) as relations,
           (select last_value from pgque.queue_queue_id_seq) as queue_seq`);
  return rows[0];
}

async function queueWith(...consumers: string[]) {
  const q = randomName();
  await createQueue(pool, q);
  for (const c of consumers) await subscribe(pool, q, c);
  return q;
}

/** Asserts the call fails with the message and changes nothing. */
async function rejects(sql: string, params: unknown[], message: RegExp | string) {
  const before = await state();
  await expectError(pool.query(sql, params), message);
  expect(await state()).toEqual(before);
}

describe('queue names', () => {
  it('NULL and empty names are refused', async () => {
    await rejects('select pgque.create_queue(null)', [], 'Invalid NULL value');
    await rejects(`select pgque.create_queue('')`, [], /must not be empty/);
  });

  it('names are limited to 57 bytes, counted in UTF-8, so pgque_<name> fits a NOTIFY channel', async () => {
    const ascii57 = `q${'x'.repeat(56)}`;
    const ascii58 = `q${'x'.repeat(57)}`;
    const accented58 = 'é'.repeat(29); // 29 characters, 58 bytes
    const accented57 = `${'é'.repeat(28)}a`;
    const emoji57 = `${'🐘'.repeat(14)}a`; // 4 bytes each
    await rejects(
      'select pgque.create_queue($1)',
      [ascii58],
      /^queue name too long: 58 bytes \(max 57\)/,
    );
    await rejects(
      'select pgque.create_queue($1)',
      [accented58],
      /^queue name too long: 58 bytes \(max 57\)/,
    );
    await rejects('select pgque.create_queue($1)', [`${'🐘'.repeat(14)}ab`], /58 bytes/);
    for (const name of [ascii57, accented57, emoji57]) {
      expect(await value(pool, 'select pgque.create_queue($1)', [name])).toBe(1);
      await subscribe(pool, name, 'c');
      // the longest channel name still works end to end
      await withClient(url, async (listener) => {
        const got: string[] = [];
        listener.on('notification', (n) => got.push(n.channel));
        await listener.query(`listen "pgque_${name}"`);
        await send(pool, name, 'x');
        await tick(pool, name);
        for (let i = 0; i < 100 && got.length === 0; i++) await listener.query('select 1');
        expect(got).toEqual([`pgque_${name}`]);
      });
      expect((await receive(pool, name, 'c')).map((m) => m.payload)).toEqual(['x']);
    }
  });

  it('names are data, never SQL: quotes, spaces and dots are fine', async () => {
    const name = `we'ird "queue". ${randomName()}`;
    expect(await value(pool, 'select pgque.create_queue($1)', [name])).toBe(1);
    expect(await value(pool, 'select pgque.create_queue($1)', [name])).toBe(0);
    await subscribe(pool, name, `c'o"n.s`);
    await send(pool, name, 'ok');
    await tick(pool, name);
    expect((await receive(pool, name, `c'o"n.s`)).map((m) => m.payload)).toEqual(['ok']);
  });
});

describe('unknown queues, consumers and batches', () => {
  it('unknown queues give the documented errors', async () => {
    const none = randomName('missing');
    await rejects('select pgque.send($1, $2::text)', [none, 'x'], `queue not found: ${none}`);
    await rejects(`select pgque.send($1, 't', '{}'::jsonb)`, [none], `queue not found: ${none}`);
    await rejects(
      `select pgque.send_batch($1, array['x']::text[])`,
      [none],
      `queue not found: ${none}`,
    );
    await rejects(`select pgque.insert_event($1, 't', 'x')`, [none], `queue not found: ${none}`);
    await rejects('select pgque.send(null::text, $1::text)', ['x'], 'queue not found: <NULL>');
    await rejects('select pgque.ticker($1)', [none], 'no such queue');
    await rejects('select pgque.ticker(null::text)', [], 'no such queue');
    await rejects('select pgque.force_next_tick($1)', [none], `queue not found: ${none}`);
    await rejects('select pgque.subscribe($1, $2)', [none, 'c'], 'Event queue not created yet');
    await rejects(
      'select pgque.register_consumer($1, $2)',
      [none, 'c'],
      'Event queue not created yet',
    );
    await rejects('select pgque.drop_queue($1)', [none], 'No such event queue');
    await rejects(
      'select pgque.set_queue_config($1, $2, $3)',
      [none, 'ticker_max_count', '5'],
      'No such event queue',
    );
    await rejects('select pgque.current_event_table($1)', [none], 'Event queue not found');
    // an empty batch is not even looked up
    expect(await value(pool, `select pgque.send_batch($1, '{}'::text[])`, [none])).toEqual([]);
    expect(await value(pool, 'select pgque.unsubscribe($1, $2)', [none, 'c'])).toBe(0);
    expect(await value(pool, 'select pgque.dlq_purge($1)', [none])).toBe(0);
    expect(await value(pool, 'select pgque.tune_storage($1)', [none])).toBe(0);
    expect((await pool.query('select * from pgque.get_queue_info($1)', [none])).rowCount).toBe(0);
  });

  it('unknown consumers and NULL names', async () => {
    const q = await queueWith('c');
    await rejects(
      'select * from pgque.receive($1, $2)',
      [q, 'nobody'],
      `Not subscriber to queue: ${q}/nobody`,
    );
    await rejects(
      'select pgque.next_batch($1, $2)',
      [q, 'nobody'],
      `Not subscriber to queue: ${q}/nobody`,
    );
    await rejects(
      'select * from pgque.receive($1, null)',
      [q],
      `Not subscriber to queue: ${q}/<NULL>`,
    );
    await rejects('select pgque.subscribe($1, null)', [q], /consumer name must not be empty/);
    await rejects(
      `select pgque.event_retry_raw($1, 'nobody', now(), null, now(), null, 't', 'd', null, null, null, null)`,
      [q],
      'consumer not registered',
    );
    await rejects(
      'select pgque.register_consumer_at($1, $2, 999999)',
      [q, 'c2'],
      'cannot reposition, tick not found: 999999',
    );
    expect(await value(pool, 'select pgque.unsubscribe($1, $2)', [q, 'nobody'])).toBe(0);
  });

  it('unknown batches: errors where the spec has them, 0 with a WARNING for ack', async () => {
    const q = await queueWith('c');
    const msg = `row(1, 424242, null, null, null, null, null, null, null, null)::pgque.message`;
    await rejects('select * from pgque.get_batch_events(424242)', [], 'batch not found: 424242');
    await rejects(`select pgque.nack(424242, ${msg})`, [], 'batch not found: 424242');
    await rejects(`select pgque.nack(null, ${msg})`, [], 'batch not found: <NULL>');
    await rejects('select pgque.event_retry(424242, 1, 0)', [], /batch not found: 424242/);
    await rejects('select pgque.batch_retry(424242, 0)', [], 'batch_retry: batch 424242 not found');
    await rejects('select pgque.dlq_replay(424242)', [], 'dead letter entry not found: 424242');
    await withClient(url, async (client) => {
      const notices = collectNotices(client);
      expect(await value(client, 'select pgque.ack(424242)')).toBe(0);
      expect(await value(client, 'select pgque.finish_batch(null)')).toBe(0);
      expect(notices).toEqual([
        'WARNING: finish_batch: batch 424242 not found',
        'WARNING: finish_batch: batch <NULL> not found',
      ]);
    });
    const info = await pool.query('select * from pgque.get_batch_info(424242)');
    expect(info.rows).toHaveLength(1);
    expect(Object.values(info.rows[0]).every((v) => v === null)).toBe(true);

    // a message that is not in the batch, or a NULL one
    await send(pool, q, 'real');
    await tick(pool, q);
    const [m] = await receive(pool, q, 'c');
    const batch = m?.batch_id as string;
    await rejects(
      `select pgque.nack($1, row(99999999, $1, null, null, null, null, null, null, null, null)::pgque.message)`,
      [batch],
      `msg_id 99999999 not found in batch ${batch}`,
    );
    await rejects(
      'select pgque.nack($1, null::pgque.message)',
      [batch],
      `msg_id <NULL> not found in batch ${batch}`,
    );
    // a finished batch is unknown from then on
    expect(await value(pool, 'select pgque.ack($1)', [batch])).toBe(1);
    await rejects(
      `select pgque.nack($1, row($2::bigint, $1, null, null, null, null, null, null, null, null)::pgque.message)`,
      [batch, m?.msg_id],
      `batch not found: ${batch}`,
    );
  });
});

describe('arguments out of range', () => {
  it('receive refuses max_return < 1 and opens no batch', async () => {
    const q = await queueWith('c');
    await send(pool, q, 'kept');
    await tick(pool, q);
    for (const n of [0, -5]) {
      await rejects(
        'select * from pgque.receive($1, $2, $3)',
        [q, 'c', n],
        `pgque.receive: max_return must be >= 1, got ${n}`,
      );
    }
    expect((await receive(pool, q, 'c')).map((m) => m.payload)).toEqual(['kept']);
  });

  it('send_batch refuses a NULL array', async () => {
    const q = await queueWith('c');
    await rejects('select pgque.send_batch($1, null::text[])', [q], 'payloads must not be null');
    await rejects(
      `select pgque.send_batch($1, 't', null::jsonb[])`,
      [q],
      'payloads must not be null',
    );
  });

  it('set_queue_config refuses invalid values and unknown parameters, changing nothing', async () => {
    const q = await queueWith();
    const row = async () =>
      (await pool.query('select * from pgque.queue where queue_name = $1', [q])).rows[0];
    const before = await row();
    const bad: [string, string | null, RegExp | string][] = [
      ['ticker_max_count', '0', 'set_queue_config: ticker_max_count must be > 0, got 0'],
      ['ticker_max_count', '-3', 'set_queue_config: ticker_max_count must be > 0, got -3'],
      ['ticker_max_count', 'many', /invalid input syntax for type integer/],
      ['max_retries', '-1', 'set_queue_config: max_retries must be >= 0, got -1'],
      ['ticker_max_lag', '0', /ticker_max_lag must be > 0/],
      ['ticker_max_lag', '-1 second', /ticker_max_lag must be > 0/],
      ['ticker_idle_period', '0 seconds', /ticker_idle_period must be > 0/],
      ['rotation_period', '0', /rotation_period must be > 0/],
      ['rotation_period', 'soon', /invalid input syntax for type interval/],
      ['ticker_paused', 'maybe', /invalid input syntax for type boolean/],
      ['queue_name', 'x', 'cannot change parameter "queue_names"'],
      ['no_such_param', '1', 'cannot change parameter "no_such_params"'],
    ];
    for (const [param, v, message] of bad) {
      await rejects('select pgque.set_queue_config($1, $2, $3)', [q, param, v], message);
    }
    await rejects(
      'select pgque.set_queue_config(null, $1, $2)',
      ['max_retries', '1'],
      'Invalid NULL value',
    );
    await rejects('select pgque.set_queue_config($1, null, $2)', [q, '1'], 'Invalid NULL value');
    expect(await row()).toEqual(before);

    // valid values, with or without the queue_ prefix; NULL restores the default
    expect(
      await value(pool, 'select pgque.set_queue_config($1, $2, $3)', [
        q,
        'queue_ticker_max_count',
        '7',
      ]),
    ).toBe(1);
    expect(
      await value(pool, 'select pgque.set_queue_config($1, $2, $3)', [q, 'max_retries', '0']),
    ).toBe(1);
    expect((await row()).queue_ticker_max_count).toBe(7);
    expect((await row()).queue_max_retries).toBe(0);
    await pool.query('select pgque.set_queue_config($1, $2, null)', [q, 'ticker_max_count']);
    await pool.query('select pgque.set_queue_config($1, $2, null)', [q, 'max_retries']);
    expect(await row()).toEqual(before);
  });

  it('paused and externally ticked queues refuse the internal ticker', async () => {
    const q = await queueWith();
    await pool.query(`select pgque.set_queue_config($1, 'ticker_paused', 'true')`, [q]);
    await rejects('select pgque.ticker($1)', [q], 'Ticker has been paused for this queue');
    await rejects('select pgque.force_next_tick($1)', [q], /^queue .* is paused/);
    await pool.query(`select pgque.set_queue_config($1, 'ticker_paused', 'false')`, [q]);
    await pool.query(`select pgque.set_queue_config($1, 'external_ticker', 'true')`, [q]);
    await rejects('select pgque.ticker($1)', [q], 'This queue has external tick source.');
    await rejects('select pgque.force_next_tick($1)', [q], /configured for external ticker/);
    // the external form checks its own arguments
    const last = await value<string>(
      pool,
      'select max(tick_id) from pgque.tick t join pgque.queue q on q.queue_id = t.tick_queue where q.queue_name = $1',
      [q],
    );
    await rejects(
      'select pgque.ticker($1, $2, now(), 100)',
      [q, last],
      `external ticker tick_id must be strictly greater than current max (${last} <= ${last})`,
    );
    await rejects(
      'select pgque.ticker($1, 1000, now(), -1)',
      [q],
      /external ticker event_seq must be >= previous tick \(-1 < \d+\)/,
    );
    expect(await value(pool, 'select pgque.ticker($1, 1000, now(), 50)', [q])).toBe('1000');
    await rejects('select pgque.ticker($1, 1001, now(), 50)', [randomName()], /^queue not found: /);
    const internal = await queueWith();
    await rejects(
      'select pgque.ticker($1, 1001, now(), 50)',
      [internal],
      /is not configured for external ticker/,
    );
  });

  it('drop_queue refuses while consumers are attached unless forced; NULL is a no-op', async () => {
    const q = await queueWith('drop_only', 'drop_shared');
    const other = await queueWith('drop_shared');
    await rejects(
      'select pgque.drop_queue($1)',
      [q],
      'cannot drop queue, consumers still attached',
    );
    expect(await value(pool, 'select pgque.drop_queue(null)')).toBeNull();
    expect(await value(pool, 'select pgque.drop_queue($1, true)', [q])).toBe(1);
    expect(
      (await pool.query('select 1 from pgque.queue where queue_name = $1', [q])).rowCount,
    ).toBe(0);
    // a consumer left without subscriptions goes; one still subscribed elsewhere stays
    const names = await pool.query(
      `select co_name from pgque.consumer where co_name in ('drop_only', 'drop_shared')`,
    );
    expect(names.rows.map((r) => r.co_name)).toEqual(['drop_shared']);
    expect(await value(pool, 'select pgque.unsubscribe($1, $2)', [other, 'drop_shared'])).toBe(1);
    expect(await ticker(pool, randomName()).catch((e: Error) => e.message)).toBe('no such queue');
  });

  it('set_tick_period_ms accepts only exact divisors of 1000', async () => {
    for (const bad of [0, 3, 1001, null]) {
      await rejects(
        'select pgque.set_tick_period_ms($1)',
        [bad],
        `tick_period_ms must be an exact divisor of 1000 between 1 and 1000 (got ${bad ?? '<NULL>'})`,
      );
    }
    expect(await value(pool, 'select pgque.set_tick_period_ms(250)')).toBe(250);
    expect(await value(pool, 'select pgque.set_tick_period_ms(100)')).toBe(100);
  });
});
