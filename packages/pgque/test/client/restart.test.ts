import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { withDatabase } from '../../../../test-support/global-setup.js';
import { startTestServer, type TestServer } from '../../../../test-support/postgres-server.js';
import {
  type Client,
  Consumer,
  CoopConsumer,
  connect,
  consumerInfo,
  createQueue,
  install,
  isConnectionError,
  send,
  Ticker,
} from '../../src/index.js';
import { memoryLogger } from './support.js';

// This file runs its own PostgreSQL, because it restarts it.
const external = Boolean(process.env.DATABASE_URL);
let server: TestServer;
let url: string;

beforeAll(async () => {
  if (external) return;
  server = await startTestServer(path.join(os.tmpdir(), 'stega-restart-pg'));
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query('create database restart_test');
  await admin.end();
  url = withDatabase(server.adminUrl, 'restart_test');
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  await install(pool);
  await pool.end();
});

afterAll(async () => {
  await server?.stop();
});

const fast = { initialMs: 50, maxMs: 500 };

describe.skipIf(external)('a PostgreSQL restart while events flow', () => {
  it('loses no event, delivers none again after its ack, and every service resumes by itself', async () => {
    const logger = memoryLogger();
    const client: Client = await connect(url, { max: 10, logger, reconnectBackoff: fast });
    const queue = 'restart_q';
    await createQueue(client.pool, queue, { tickerMaxLag: 50, tickerIdlePeriod: 200 });

    // per consumer (the normal one, the cooperative group): event id -> seq, batch ids seen, deliveries
    type Seen = { seq: number; batches: Set<bigint>; deliveries: number };
    const seen = { normal: new Map<bigint, Seen>(), group: new Map<bigint, Seen>() };
    // The restart starts while both consumers handle event 90, and those handlers return
    // only once the server is down, so their nack/ack transaction meets the outage.
    let restart: Promise<void> | null = null;
    let serverDown = false;
    let restarted = false;
    const restartDuring = async (seq: number) => {
      if (seq !== 90) return;
      if (!restart) {
        restart = server.restart().then(() => {
          restarted = true;
        });
        void eventually(
          async () => {
            const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 200 });
            // a probe that connects while the server shuts down gets its FATAL as an event
            probe.on('error', () => {});
            const up = await probe.connect().then(
              () => true,
              () => false,
            );
            await probe.end().catch(() => {});
            return up ? undefined : true;
          },
          'the server to go down',
          { intervalMs: 5 },
        ).then(() => {
          serverDown = true;
        });
      }
      await eventually(() => serverDown || restarted, 'the outage', { intervalMs: 5 });
    };
    const record =
      (which: keyof typeof seen) =>
      async (event: { id: bigint; batchId: bigint; payload: unknown }) => {
        await restartDuring((event.payload as { seq: number }).seq);
        const entry = seen[which].get(event.id) ?? {
          seq: (event.payload as { seq: number }).seq,
          batches: new Set<bigint>(),
          deliveries: 0,
        };
        entry.batches.add(event.batchId);
        entry.deliveries++;
        seen[which].set(event.id, entry);
      };
    const options = { reconnectBackoff: fast, pollInterval: 2_000 };
    const ticker = new Ticker(client, { period: 20, retryPeriod: 200, reconnectBackoff: fast });
    const normal = new Consumer(client, queue, 'normal', options).handle('n', record('normal'));
    const members = ['a', 'b'].map((name) =>
      new CoopConsumer(client, queue, 'grp', { ...options, subconsumer: name }).handle(
        'n',
        record('group'),
      ),
    );
    ticker.start();
    await normal.start();
    await Promise.all(members.map((member) => member.start()));

    // the producer keeps sending through the outage, retrying sends that failed
    const total = 300;
    const confirmed = new Set<number>();
    for (let seq = 0; seq < total; seq++) {
      for (let attempt = 0; ; attempt++) {
        try {
          await send(client.pool, queue, { type: 'n', payload: { seq } });
          confirmed.add(seq);
          break;
        } catch (error) {
          if (!isConnectionError(error) || attempt > 200) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(confirmed.size).toBe(total);
    expect(restart).not.toBeNull();
    await restart;

    const covered = (which: keyof typeof seen) => {
      const seqs = new Set([...seen[which].values()].map((s) => s.seq));
      return [...confirmed].every((seq) => seqs.has(seq));
    };
    await eventually(() => covered('normal') && covered('group'), 'every event at both consumers', {
      timeoutMs: 60_000,
      intervalMs: 100,
    });

    // the restart really cut connections, and the services said so
    const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings).toContain('settling the batch failed; retrying');
    expect(warnings).toContain('notification connection lost; reconnecting');
    expect(warnings).toContain('ticker lost its connection; reconnecting');

    for (const which of ['normal', 'group'] as const) {
      const entries = [...seen[which].values()];
      // an event is only ever seen in one batch: nothing came back after its batch was acked
      expect(entries.filter((e) => e.batches.size > 1)).toEqual([]);
      const redelivered = entries.filter((e) => e.deliveries > 1).length;
      console.log(
        `${which}: ${entries.length} events, ${redelivered} handled again in their reopened batch`,
      );
    }

    // and everything still works after the restart
    const after = await send(client.pool, queue, { type: 'n', payload: { seq: -1 } });
    await eventually(
      () => seen.normal.has(after) && seen.group.has(after),
      'an event sent after the restart',
    );

    await Promise.all([normal.stop(), ...members.map((member) => member.stop()), ticker.stop()]);
    expect((await consumerInfo(client.pool, queue)).map((c) => c.consumerName)).toEqual([
      'grp',
      'normal',
    ]);
    await client.close();
  });
});
