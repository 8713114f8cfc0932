import type pg from 'pg';
import { afterAll } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { createPool } from '../../src/db/pool.js';
import { type StegaProcess, startStega } from './stega-process.js';

/** What a paging end-to-end file runs against: its database, `stega start`, an SMTP sink. */
export interface PagingScene {
  pool: pg.Pool;
  smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  stega: StegaProcess;
  stegaUrl: string;
  /** A 24x7 calendar in UTC, for the file's SLA policies. */
  calendarId: number;
}

/**
 * Starts a fresh database, an SMTP sink and `stega start` (web server and one
 * sla-breach-worker) with every delay scaled by `scale`, plus `env` (a receiver's settings:
 * `twilioEnv`, `pushEnv`, …); stops it all, and `receivers` (started by the file), after the
 * file's tests.
 */
export async function startPagingScene(
  scale: number,
  env: Record<string, string> = {},
  receivers: { stop(): Promise<void> }[] = [],
): Promise<PagingScene> {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  const port = await freePort();
  const stegaUrl = `http://127.0.0.1:${port}`;
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    PORT: String(port),
    STEGA_PUBLIC_URL: stegaUrl,
    SLA_WORKERS: '1',
    SLA_RETRY_TIME_SCALE: String(scale),
    SLA_CIRCUIT_FAILURES: '1000',
    ...env,
  });
  afterAll(async () => {
    await stega.stop();
    await Promise.all([pool.end(), smtp.stop(), ...receivers.map((r) => r.stop())]);
  });
  const calendar = await stega.api<{ id: number }>('POST', '/api/calendars', {
    name: 'always',
    time_zone: 'UTC',
    always_open: true,
    weekly_hours: {},
    holidays: [],
  });
  return { pool, smtp, stega, stegaUrl, calendarId: calendar.body.id };
}

/** Stega's settings for Twilio's API played by a local receiver at `url`. */
export function twilioEnv(url: string, account: { sid: string; token: string; from: string }) {
  return {
    TWILIO_ACCOUNT_SID: account.sid,
    TWILIO_AUTH_TOKEN: account.token,
    TWILIO_FROM_NUMBER: account.from,
    TWILIO_API_URL: url,
  };
}

/** Stega's settings for Web Push to the local push service (web-push-testing). */
export function pushEnv(subject: string) {
  return {
    WEB_PUSH_ALLOW_HTTP: '1',
    // the push service's endpoints name `localhost`: both loopback addresses
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    WEB_PUSH_SUBJECT: subject,
  };
}
