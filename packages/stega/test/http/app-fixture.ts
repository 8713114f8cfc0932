import os from 'node:os';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type pg from 'pg';
import { afterAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database.js';
import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';
import { loadConfig } from '../../src/config.js';
import { createPool } from '../../src/db/pool.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger, type Logger } from '../../src/log.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** A clock the test moves by hand. */
export class TestClock {
  constructor(private current: Date) {}
  now = (): Date => new Date(this.current);
  set(at: Date | string): void {
    this.current = new Date(at);
  }
  advanceMinutes(minutes: number): Date {
    this.current = new Date(this.current.getTime() + minutes * 60_000);
    return this.now();
  }
}

export interface TestApp {
  app: FastifyInstance;
  db: TestDatabase;
  /** The app's own pool (int8 parsed to numbers). */
  pool: pg.Pool;
  clock: TestClock;
  /** `app.inject` as the admin, parsing the JSON body. */
  admin: (options: InjectOptions) => Promise<{ status: number; body: any }>;
  /** `app.inject` with the given bearer token (none when undefined). */
  as: (token: string | undefined, options: InjectOptions) => Promise<{ status: number; body: any }>;
}

/** A fresh migrated database and an app on it with a movable clock; closed after the file. */
export async function startTestApp(
  startAt = '2026-03-02T09:00:00Z',
  logger: Logger = createLogger('silent', 'test'),
  /** Environment added to (or overriding) the fixture's. */
  env: Record<string, string> = {},
): Promise<TestApp> {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 5);
  const clock = new TestClock(new Date(startAt));
  const config = loadConfig(
    {
      STEGA_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      STEGA_DATA_DIR: os.tmpdir(),
      WEBHOOK_ALLOWED_NETWORKS: RECEIVER_NETWORKS,
      ...env,
    },
    os.tmpdir(),
  );
  const app = await buildApp({
    pool,
    config,
    logger,
    now: clock.now,
  });
  afterAll(async () => {
    await app.close();
    await pool.end();
  });
  const as = async (token: string | undefined, options: InjectOptions) => {
    const response = await app.inject({
      ...options,
      headers: {
        ...(options.headers ?? {}),
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
    });
    const text = response.body;
    return { status: response.statusCode, body: text ? JSON.parse(text) : undefined };
  };
  return { app, db, pool, clock, as, admin: (options) => as(ADMIN_TOKEN, options) };
}
