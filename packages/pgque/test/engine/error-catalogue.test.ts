// The engine's error convention, as PgQue callers depend on it: every error the engine
// raises on purpose is SQLSTATE P0001 (`exception when raise_exception` catches it, as it
// catches PgQue's), with PgQue's message text, the engine's stable code in CONSTRAINT_NAME
// and 'pgque' in SCHEMA_NAME; the client maps each code to its class, never the text.
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  PGQUE_ENGINE_CODES,
  PGQUE_PARTITION_CODES,
  PgqueBatchNotFoundError,
  PgqueConsumerNotFoundError,
  PgqueConsumerStateError,
  PgqueDeadLetterNotFoundError,
  PgqueEngineStateError,
  type PgqueError,
  PgqueEventNotFoundError,
  PgqueInvalidInputError,
  PgquePartitionIncompleteError,
  PgqueQueueNotFoundError,
  PgqueQueueNotWritableError,
  PgqueSchedulerUnavailableError,
  PgqueSlotBatchOpenError,
  PgqueSlotCountMismatchError,
  PgqueSlotLeaseLostError,
  PgqueSlotNotFoundError,
  PgqueTickerStateError,
  toPgqueError,
} from '../../src/index.js';
import { config, createQueue, receive, send, subscribe, tick, value } from './helpers.js';

const { pool } = await createTestDatabase();
const functionsDir = new URL('../../sql/functions/', import.meta.url);
const CONVENTION =
  /^\s*using errcode = 'raise_exception', schema = 'pgque', constraint = '(PQ\d{3})'(?:\s*,\s*(?:hint|detail) = '(?:[^']|'')*')*\s*$/;

interface Raise {
  file: string;
  text: string;
  /** The engine code, or undefined when the raise does not follow the convention. */
  code: string | undefined;
}

/** Every `raise exception` of the engine's functions, with the code its USING clause gives. */
function raises(): { found: Raise[]; statements: number } {
  const found: Raise[] = [];
  let statements = 0;
  for (const file of readdirSync(functionsDir).filter((f) => f.endsWith('.sql'))) {
    const sql = readFileSync(new URL(file, functionsDir), 'utf8');
    statements += sql.match(/\braise\s+exception\b/gi)?.length ?? 0;
    // the text is one or more adjacent literals; the rest, up to the `;`, its arguments
    for (const match of sql.matchAll(/raise exception '((?:[^']|'')*)'([^;]*);/g)) {
      const rest = (match[2] ?? '').replace(/^(\s*'(?:[^']|'')*')+/, '');
      const using = rest.slice(rest.indexOf('using'));
      found.push({ file, text: match[1] ?? '', code: CONVENTION.exec(using)?.[1] });
    }
  }
  return { found, statements };
}

const classOf: Record<string, new (...args: never[]) => PgqueError> = {
  [PGQUE_ENGINE_CODES.queueNotFound]: PgqueQueueNotFoundError,
  [PGQUE_ENGINE_CODES.consumerNotFound]: PgqueConsumerNotFoundError,
  [PGQUE_ENGINE_CODES.batchNotFound]: PgqueBatchNotFoundError,
  [PGQUE_ENGINE_CODES.eventNotFound]: PgqueEventNotFoundError,
  [PGQUE_ENGINE_CODES.deadLetterNotFound]: PgqueDeadLetterNotFoundError,
  [PGQUE_ENGINE_CODES.queueNotWritable]: PgqueQueueNotWritableError,
  [PGQUE_ENGINE_CODES.tickerState]: PgqueTickerStateError,
  [PGQUE_ENGINE_CODES.consumerState]: PgqueConsumerStateError,
  [PGQUE_ENGINE_CODES.engineState]: PgqueEngineStateError,
  [PGQUE_ENGINE_CODES.invalidInput]: PgqueInvalidInputError,
  [PGQUE_ENGINE_CODES.schedulerUnavailable]: PgqueSchedulerUnavailableError,
  [PGQUE_PARTITION_CODES.slotLeaseLost]: PgqueSlotLeaseLostError,
  [PGQUE_PARTITION_CODES.slotCountMismatch]: PgqueSlotCountMismatchError,
  [PGQUE_PARTITION_CODES.slotNotFound]: PgqueSlotNotFoundError,
  [PGQUE_PARTITION_CODES.slotBatchOpen]: PgqueSlotBatchOpenError,
  [PGQUE_PARTITION_CODES.partitionIncomplete]: PgquePartitionIncompleteError,
};

/** What node-postgres makes of an engine error: the fields the client maps by. */
function engineError(text: string, code: string): Error {
  return Object.assign(new Error(text), { code: 'P0001', schema: 'pgque', constraint: code });
}

describe('every raise in the engine follows the convention', () => {
  const { found, statements } = raises();

  it('no raise is missed by the scan, and none lacks the convention', () => {
    expect(found.length).toBeGreaterThan(80);
    expect(found.length).toBe(statements);
    expect(found.filter((r) => r.code === undefined)).toEqual([]);
    // no other SQLSTATE anywhere: a custom class would escape `when raise_exception`
    for (const file of readdirSync(functionsDir).filter((f) => f.endsWith('.sql'))) {
      const sql = readFileSync(new URL(file, functionsDir), 'utf8');
      const errcodes = [...sql.matchAll(/errcode\s*=\s*'([^']*)'/g)].map((m) => m[1]);
      expect(
        errcodes.filter((c) => c !== 'raise_exception'),
        file,
      ).toEqual([]);
    }
  });

  it('every code used has a class, and every class a code', () => {
    const used = new Set(found.map((r) => r.code));
    const codes = [...Object.values(PGQUE_ENGINE_CODES), ...Object.values(PGQUE_PARTITION_CODES)];
    expect([...used].sort()).toEqual(codes.sort());
    expect(Object.keys(classOf).sort()).toEqual(codes.sort());
  });

  it.each(found.map((r) => [r.code, r.text, r.file] as const))(
    '%s "%s" (%s) maps to its class by code',
    (code, text) => {
      const mapped = toPgqueError(engineError(text, code as string), { operation: 'op' });
      expect(mapped).toBeInstanceOf(classOf[code as string] as never);
      expect(mapped.engineCode).toBe(code);
      expect(mapped.sqlState).toBe('P0001');
    },
  );
});

interface Case {
  name: string;
  code: string;
  /** PgQue's message text for the condition. */
  message: RegExp;
  /** Prepares what the statement needs and returns it (literal values only). */
  statement: (scene: Scene) => Promise<string>;
}

interface Scene {
  /** A queue with consumer 'c' subscribed, fresh for each case. */
  queue: string;
}

/** A batch of consumer 'c' held open on the scene's queue. */
async function openBatch({ queue }: Scene): Promise<string> {
  await send(pool, queue, 'e');
  await tick(pool, queue);
  const rows = await receive(pool, queue, 'c');
  return rows[0]?.batch_id as string;
}

const NO_SUCH_MESSAGE = (batch: string | number) =>
  `row(123456789, ${batch}, null, null, null, now(), null, null, null, null)::pgque.message`;

// One case per condition PgQue callers are known to catch, and at least one per code.
const cases: Case[] = [
  {
    name: 'send to an unknown queue',
    code: 'PQ001',
    message: /^queue not found: no_such_queue$/,
    statement: async () => `select pgque.send('no_such_queue', 'x'::text)`,
  },
  {
    name: 'ticker on an unknown queue',
    code: 'PQ001',
    message: /^no such queue$/,
    statement: async () => `select pgque.ticker('no_such_queue')`,
  },
  {
    name: 'drop_queue of an unknown queue',
    code: 'PQ001',
    message: /^No such event queue$/,
    statement: async () => `select pgque.drop_queue('no_such_queue')`,
  },
  {
    name: 'subscribe to an unknown queue',
    code: 'PQ001',
    message: /^Event queue not created yet$/,
    statement: async () => `select pgque.subscribe('no_such_queue', 'c')`,
  },
  {
    name: 'receive for an unregistered consumer',
    code: 'PQ002',
    message: /^Not subscriber to queue: q_\w+\/nobody$/,
    statement: async ({ queue }) => `select * from pgque.receive('${queue}', 'nobody', 10)`,
  },
  {
    name: 'nack of an unknown batch',
    code: 'PQ003',
    message: /^batch not found: 987654321$/,
    statement: async () => `select pgque.nack(987654321, ${NO_SUCH_MESSAGE(987654321)})`,
  },
  {
    name: 'get_batch_events of an unknown batch',
    code: 'PQ003',
    message: /^batch not found: 987654321$/,
    statement: async () => 'select * from pgque.get_batch_events(987654321)',
  },
  {
    name: 'nack of a message not in the batch',
    code: 'PQ004',
    message: /^msg_id 123456789 not found in batch \d+$/,
    statement: async (scene) => {
      const batch = await openBatch(scene);
      return `select pgque.nack(${batch}, ${NO_SUCH_MESSAGE(batch)})`;
    },
  },
  {
    name: 'dlq_replay of a missing entry',
    code: 'PQ005',
    message: /^dead letter entry not found: 987654321$/,
    statement: async () => 'select pgque.dlq_replay(987654321)',
  },
  {
    name: 'send to a queue refusing inserts',
    code: 'PQ006',
    message: /^Insert into queue disallowed$/,
    statement: async ({ queue }) => {
      await pool.query('update pgque.queue set queue_disable_insert = true where queue_name = $1', [
        queue,
      ]);
      return `select pgque.send('${queue}', 'x'::text)`;
    },
  },
  {
    name: 'ticker on a paused queue',
    code: 'PQ007',
    message: /^Ticker has been paused for this queue$/,
    statement: async ({ queue }) => {
      await config(pool, queue, 'ticker_paused', 'true');
      return `select pgque.ticker('${queue}')`;
    },
  },
  {
    name: 'ticker on an externally ticked queue',
    code: 'PQ007',
    message: /^This queue has external tick source\.$/,
    statement: async ({ queue }) => {
      await config(pool, queue, 'external_ticker', 'true');
      return `select pgque.ticker('${queue}')`;
    },
  },
  {
    name: 'force_next_tick on a paused queue',
    code: 'PQ007',
    message: /^queue q_\w+ is paused/,
    statement: async ({ queue }) => {
      await config(pool, queue, 'ticker_paused', 'true');
      return `select pgque.force_next_tick('${queue}')`;
    },
  },
  {
    name: 'drop_queue with consumers attached',
    code: 'PQ008',
    message: /^cannot drop queue, consumers still attached$/,
    statement: async ({ queue }) => `select pgque.drop_queue('${queue}')`,
  },
  {
    name: 'a tick window the engine has no data for',
    code: 'PQ009',
    message: /^Cannot find data for window 999999998\.\.999999999 of queue \d+$/,
    statement: async ({ queue }) => {
      const id = await value(pool, 'select queue_id from pgque.queue where queue_name = $1', [
        queue,
      ]);
      return `select pgque._window_event_tables(${id}, 999999998, 999999999)`;
    },
  },
  {
    name: 'receive with max_return 0',
    code: 'PQ010',
    message: /^pgque\.receive: max_return must be >= 1, got 0$/,
    statement: async ({ queue }) => `select * from pgque.receive('${queue}', 'c', 0)`,
  },
  {
    name: 'create_queue with an empty name',
    code: 'PQ010',
    message: /^queue name must not be empty$/,
    statement: async () => `select pgque.create_queue('')`,
  },
  {
    name: 'start() without pg_cron',
    code: 'PQ011',
    message: /PgQue itself works without pg_cron/,
    statement: async () => 'select pgque.start()',
  },
];

/**
 * Runs `statement` inside a PL/pgSQL block that catches it with
 * `exception when raise_exception` and reports the diagnostics it caught.
 */
async function caughtByPlpgsql(client: pg.PoolClient, statement: string) {
  await client.query(`
    do $block$
    declare
      state text; constraint_code text; schema text; message text;
    begin
      execute ${client.escapeLiteral(statement)};
      perform pg_catalog.set_config('pgque_test.caught', 'nothing raised', false);
    exception when raise_exception then
      get stacked diagnostics state = returned_sqlstate, constraint_code = constraint_name,
                              schema = schema_name, message = message_text;
      perform pg_catalog.set_config('pgque_test.caught',
        pg_catalog.json_build_object('state', state, 'code', constraint_code,
                                     'schema', schema, 'message', message)::text, false);
    end
    $block$`);
  const caught = await value<string>(client, "select current_setting('pgque_test.caught')");
  return caught === 'nothing raised' ? caught : JSON.parse(caught);
}

describe('each condition, raised by the live engine', () => {
  it('the cases cover every engine code', () => {
    expect([...new Set(cases.map((c) => c.code))].sort()).toEqual(
      Object.values(PGQUE_ENGINE_CODES).sort(),
    );
  });

  it.each(cases.map((c) => [c.name, c] as const))(
    '%s: caught by `when raise_exception`, mapped to its class by code',
    async (_name, testCase) => {
      const queue = randomName();
      await createQueue(pool, queue);
      await subscribe(pool, queue, 'c');
      const statement = await testCase.statement({ queue });

      const client = await pool.connect();
      try {
        expect(await caughtByPlpgsql(client, statement)).toEqual({
          state: 'P0001',
          code: testCase.code,
          schema: 'pgque',
          message: expect.stringMatching(testCase.message),
        });
      } finally {
        client.release();
      }

      const error = await pool.query(statement).then(
        () => null,
        (e: Error) => e,
      );
      expect(error).toMatchObject({ code: 'P0001', schema: 'pgque', constraint: testCase.code });
      const mapped = toPgqueError(error, { operation: 'op', queue });
      expect(mapped).toBeInstanceOf(classOf[testCase.code] as never);
      expect(mapped.engineCode).toBe(testCase.code);
      expect(mapped.message).toBe(`op: ${error?.message}`);
    },
  );
});
