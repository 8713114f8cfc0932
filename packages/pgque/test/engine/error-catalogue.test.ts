// Every error the engine raises on purpose carries a SQLSTATE of its own, and the client
// maps each of those codes to its class; the live engine answers with the codes too.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  PGQUE_SQLSTATES,
  PgqueBatchNotFoundError,
  PgqueConsumerNotFoundError,
  PgqueConsumerStateError,
  PgqueDeadLetterNotFoundError,
  PgqueEngineStateError,
  type PgqueError,
  PgqueEventNotFoundError,
  PgqueInvalidInputError,
  PgqueQueueNotFoundError,
  PgqueQueueNotWritableError,
  PgqueTickerStateError,
  toPgqueError,
} from '../../src/index.js';
import { config, createQueue, subscribe } from './helpers.js';

const functionsDir = new URL('../../sql/functions/', import.meta.url);

/** Each `raise exception '<text>' … using errcode = '<code>'` of the engine's functions. */
function raises(): { file: string; text: string; code: string | undefined }[] {
  const found: { file: string; text: string; code: string | undefined }[] = [];
  for (const file of readdirSync(functionsDir).filter((f) => f.endsWith('.sql'))) {
    const sql = readFileSync(new URL(file, functionsDir), 'utf8');
    for (const match of sql.matchAll(/raise exception '((?:[^']|'')*)'([^;]*);/g)) {
      const code = /using errcode = '([0-9A-Z]{5})'/.exec(match[2] ?? '')?.[1];
      found.push({ file, text: match[1] ?? '', code });
    }
  }
  return found;
}

const classOf: Record<string, new (...args: never[]) => PgqueError> = {
  [PGQUE_SQLSTATES.queueNotFound]: PgqueQueueNotFoundError,
  [PGQUE_SQLSTATES.consumerNotFound]: PgqueConsumerNotFoundError,
  [PGQUE_SQLSTATES.batchNotFound]: PgqueBatchNotFoundError,
  [PGQUE_SQLSTATES.eventNotFound]: PgqueEventNotFoundError,
  [PGQUE_SQLSTATES.deadLetterNotFound]: PgqueDeadLetterNotFoundError,
  [PGQUE_SQLSTATES.queueNotWritable]: PgqueQueueNotWritableError,
  [PGQUE_SQLSTATES.tickerState]: PgqueTickerStateError,
  [PGQUE_SQLSTATES.consumerState]: PgqueConsumerStateError,
  [PGQUE_SQLSTATES.engineState]: PgqueEngineStateError,
  [PGQUE_SQLSTATES.invalidInput]: PgqueInvalidInputError,
};

describe('the engine error catalogue', () => {
  const all = raises();

  it('every raise carries an engine SQLSTATE, but the one PgQue clients catch as P0001', () => {
    expect(all.length).toBeGreaterThan(70);
    const withoutCode = all.filter((r) => r.code === undefined).map((r) => r.text);
    // pgque.start() without pg_cron: upstream's acceptance test catches raise_exception
    expect(withoutCode).toEqual([expect.stringContaining('schedules pg_cron jobs')]);
    const known = new Set<string>(Object.values(PGQUE_SQLSTATES));
    expect(all.filter((r) => r.code && !known.has(r.code))).toEqual([]);
  });

  it.each(all.filter((r) => r.code !== undefined).map((r) => [r.code, r.text, r.file] as const))(
    '%s "%s" (%s) maps to its class',
    (code, text) => {
      const error = Object.assign(new Error(text), { code });
      const expected = classOf[code as string];
      expect(expected).toBeDefined();
      expect(toPgqueError(error, { operation: 'op' })).toBeInstanceOf(expected as never);
    },
  );

  it('the live engine answers with those codes', async () => {
    const { pool } = await createTestDatabase();
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    const codeOf = (text: string, values: unknown[] = []) =>
      pool.query(text, values).then(
        () => 'no error',
        (e: { code?: string }) => e.code,
      );
    expect(await codeOf('select pgque.send($1, $2::text)', ['missing', 'x'])).toBe('PQ001');
    expect(await codeOf('select * from pgque.receive($1, $2, 1)', [q, 'nobody'])).toBe('PQ002');
    expect(await codeOf('select * from pgque.get_batch_events(987654321)')).toBe('PQ003');
    expect(await codeOf('select pgque.dlq_replay(987654321)')).toBe('PQ005');
    expect(await codeOf('select pgque.drop_queue($1)', [q])).toBe('PQ008');
    expect(await codeOf('select * from pgque.receive($1, $2, 0)', [q, 'c'])).toBe('PQ010');
    expect(await codeOf("select pgque.create_queue('')")).toBe('PQ010');
    await config(pool, q, 'ticker_paused', 'true');
    expect(await codeOf('select pgque.force_next_tick($1)', [q])).toBe('PQ007');
  });
});
