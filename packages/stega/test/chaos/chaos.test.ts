import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { freePort, startTestServer } from '../../../../test-support/postgres-server.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { startWebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { migrate, NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { killAllChildren, type StegaChild, spawnStega } from '../deploy/processes.js';
import { alertPolicyInsert, ticketsDueInsert } from '../deploy/workload.js';
import { duplicatesOf, type Fault } from './faults.js';

/** Members of the group at any time, and the shape of the load. */
const WORKERS = 3;
const CHUNKS = 80;
const CHUNK = 25; // 80 x 25 = 2,000 breaches
const CHUNK_EVERY_MS = 900; // ... arriving over ~72 s
const CANARIES = 20; // due while the jobs runner is down: only its caught-up cron run finds them
const DEAD_INTERVAL_S = 5;
/** Calls one worker may have in flight: SLA_DELIVERY_CONCURRENCY (64) alerts x email and webhook. */
const IN_FLIGHT_PER_WORKER = 64 * 2;
/** The suite's bound; the run itself takes 2-3 minutes on 2 cores. */
const SUITE_MS = 8 * 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const minuteAfter = (t: number) => Math.ceil(t / 60_000) * 60_000;

/** A seeded generator (mulberry32), so a failing run can be replayed with CHAOS_SEED. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The promise of issue 7 under faults: with 3 sla-breach-worker processes and 2,000
 * breaches arriving over about a minute, workers are SIGKILLed and restarted (some under
 * their old member name, which resumes their batch, some under a new one, which leaves the
 * batch to a takeover), one is SIGSTOPped past the dead interval and continued, one is
 * stopped gracefully, PostgreSQL restarts once, the ticker leader and the jobs runner are
 * killed once each. Afterwards every breach has its three deliveries, no channel got an
 * alert twice unless a fault explains it (a worker killed, or PostgreSQL gone, between a
 * send and its ledger commit: counted and bounded), the dead letters hold only the
 * invalid event planted on purpose, and every takeover is in the engine's takeover log.
 */
describe('chaos: 3 sla-breach-workers, 2,000 breaches, kills, a stop and a PostgreSQL restart', async () => {
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
  const rand = random(seed);
  // the suite's own server, whatever DATABASE_URL says: it must be able to restart it
  const external = process.env.DATABASE_URL;
  delete process.env.DATABASE_URL;
  const server = await startTestServer(path.join(os.tmpdir(), 'stega-chaos-pg'));
  if (external !== undefined) process.env.DATABASE_URL = external;
  const url = new URL(server.adminUrl);
  url.pathname = '/chaos';
  const admin = createPool(server.adminUrl, 1);
  await admin.query('create database chaos');
  await admin.end();
  const pool = createPool(url.toString(), 6);
  await migrate(pool, { coopPageSize: 50 });

  const smtp = await startSmtpSink();
  const hook = await startWebhookReceiver({ delayMs: 5 });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-chaos-'));
  const env = {
    DATABASE_URL: url.toString(),
    SMTP_URL: smtp.url,
    STEGA_DATA_DIR: dir,
    SLA_DEAD_INTERVAL_SECONDS: String(DEAD_INTERVAL_S),
    PORT: String(await freePort()),
  };

  const faults: Fault[] = [];
  const everyProcess: StegaChild[] = [];
  const spawn = (args: string[], extra: Record<string, string> = {}) => {
    const child = spawnStega(args, { ...env, ...extra });
    everyProcess.push(child);
    return child;
  };
  /** Live workers by slot; names are `w<slot>-<generation>`. */
  const workers = new Map<number, { name: string; process: StegaChild }>();
  /** Every process that ever ran under a member name. */
  const byName = new Map<string, StegaChild[]>();
  let generation = 0;
  const startWorker = (slot: number, name = `w${slot}-${++generation}`) => {
    const child = spawn(['sla-breach-worker'], { SUBCONSUMER_NAME: name });
    workers.set(slot, { name, process: child });
    byName.set(name, [...(byName.get(name) ?? []), child]);
    return name;
  };
  const tickers = [spawn(['ticker']), spawn(['ticker'])];
  let jobs = spawn(['jobs']);
  spawn(['notification-worker']);
  for (let slot = 1; slot <= WORKERS; slot++) startWorker(slot);

  afterAll(async () => {
    await killAllChildren();
    await Promise.all([pool.end(), smtp.stop(), hook.stop()]);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Retries `work` while PostgreSQL is away (the restart), bounded. */
  async function persist<T>(work: () => Promise<T>, what: string): Promise<T> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        return await work();
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`${what}: ${(error as Error).message}`);
        await sleep(300);
      }
    }
  }
  const memberBatch = async (name: string): Promise<number | null> => {
    const { rows } = await pool.query('select current_batch from pgque.get_consumer_info($1, $2)', [
      NOTIFICATIONS_QUEUE,
      `${SLA_GROUP}.${name}`,
    ]);
    return rows[0]?.current_batch == null ? null : Number(rows[0].current_batch);
  };
  const takeovers = async () => {
    const { rows } = await pool.query(
      `select taken_at, old_subconsumer, new_subconsumer, old_batch_id, new_batch_id
         from pgque.get_coop_takeovers($1, $2, 10000)`,
      [NOTIFICATIONS_QUEUE, SLA_GROUP],
    );
    return rows.map((row) => ({
      takenAt: (row.taken_at as Date).getTime(),
      old: String(row.old_subconsumer),
      new: String(row.new_subconsumer),
      oldBatch: Number(row.old_batch_id),
      newBatch: Number(row.new_batch_id),
    }));
  };
  /** A live worker slot, preferring one that holds a batch right now (bounded wait). */
  const pickBusyWorker = async (): Promise<number> => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const slots = [...workers.keys()];
      const busy: number[] = [];
      for (const slot of slots) {
        const name = workers.get(slot)?.name ?? '';
        if ((await memberBatch(name).catch(() => null)) !== null) busy.push(slot);
      }
      const from = busy.length > 0 ? busy : Date.now() > deadline ? slots : [];
      if (from.length > 0) return from[Math.floor(rand() * from.length)] as number;
      await sleep(100);
    }
  };

  let pgRestarting: Promise<void> | null = null;
  const waitForPostgres = async () => {
    while (pgRestarting) await pgRestarting;
  };

  /** SIGKILL a worker, note its batch, restart it after a moment (same or new name). */
  async function killWorker(sameName: boolean): Promise<void> {
    const slot = await pickBusyWorker();
    const victim = workers.get(slot);
    if (!victim) return;
    const fault: Fault = { kind: 'worker-kill', at: Date.now(), target: victim.name };
    victim.process.signal('SIGKILL');
    faults.push(fault);
    await victim.process.exited;
    fault.batch = await persist(() => memberBatch(victim.name), 'batch of the killed member');
    await sleep(500 + rand() * 1500);
    await waitForPostgres();
    fault.restartedAs = startWorker(slot, sameName ? victim.name : undefined);
  }

  /** SIGSTOP a worker holding a batch until its batch is taken over, then SIGCONT it. */
  async function stopWorker(): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const slot = await pickBusyWorker();
      const victim = workers.get(slot);
      if (!victim) return;
      const at = Date.now();
      victim.process.signal('SIGSTOP');
      const batch = await memberBatch(victim.name);
      if (batch === null) {
        victim.process.signal('SIGCONT'); // it finished its batch just before: try again
        await sleep(300);
        continue;
      }
      const fault: Fault = { kind: 'worker-stop', at, target: victim.name, batch };
      faults.push(fault);
      await eventually(
        async () => (await takeovers()).some((t) => t.old === victim.name && t.oldBatch === batch),
        `the batch of stopped ${victim.name} to be taken over`,
        PROCESS_PATIENCE,
      );
      await sleep(1000);
      victim.process.signal('SIGCONT');
      fault.end = Date.now();
      return;
    }
    throw new Error('no worker held a batch long enough to be stopped with it');
  }

  /** SIGTERM a worker (graceful: hand back, leave), then start a new member in its slot. */
  async function terminateWorker(): Promise<void> {
    const slot = await pickBusyWorker();
    const victim = workers.get(slot);
    if (!victim) return;
    const fault: Fault = { kind: 'worker-term', at: Date.now(), target: victim.name };
    faults.push(fault);
    victim.process.signal('SIGTERM');
    await victim.process.exited;
    fault.end = Date.now();
    fault.restartedAs = startWorker(slot);
  }

  const leaderOf = (ticker: StegaChild): boolean => {
    const changes = ticker.logs().filter((l) => String(l.msg).startsWith('ticker leadership'));
    return changes.at(-1)?.msg === 'ticker leadership acquired';
  };
  let tickerFailoverMs = Number.NaN;
  async function killTickerLeader(): Promise<void> {
    const leader = await eventually(() => tickers.find(leaderOf), 'a ticker leader', {
      ...PROCESS_PATIENCE,
      timeoutMs: 30_000,
    });
    const standby = tickers.find((t) => t !== leader) as StegaChild;
    const at = Date.now();
    leader.signal('SIGKILL');
    faults.push({ kind: 'ticker-kill', at, target: `ticker pid ${leader.pid}` });
    await leader.exited;
    const acquired = await eventually(
      () =>
        standby.logs().find((l) => l.msg === 'ticker leadership acquired' && Number(l.time) >= at),
      'the standby ticker to take over',
      { ...PROCESS_PATIENCE, timeoutMs: 30_000 },
    );
    tickerFailoverMs = Number(acquired.time) - at;
    tickers.splice(tickers.indexOf(leader), 1, spawn(['ticker']));
  }

  let pgRestartMs = Number.NaN;
  async function restartPostgres(): Promise<void> {
    const fault: Fault = { kind: 'pg-restart', at: Date.now() };
    faults.push(fault);
    pgRestarting = server.restart().finally(() => {
      pgRestarting = null;
    });
    await pgRestarting;
    fault.end = Date.now();
    pgRestartMs = fault.end - fault.at;
  }

  /** The jobs runner: killed once; back after a cron minute passed without it. */
  let canaryIds: number[] = [];
  const jobsOutage = { killedAt: 0, missedMinute: 0, restartedAt: 0 };
  async function jobsChaos(policy: Parameters<typeof ticketsDueInsert>[1]): Promise<void> {
    await sleep(2_000);
    jobsOutage.killedAt = Date.now();
    jobs.signal('SIGKILL');
    faults.push({ kind: 'jobs-kill', at: jobsOutage.killedAt, target: 'jobs' });
    await jobs.exited;
    // canaries fall due before the first minute the runner misses
    jobsOutage.missedMinute = minuteAfter(jobsOutage.killedAt + 10_000);
    canaryIds = await persist(
      () =>
        ticketsDueInsert(pool, policy, CANARIES, new Date(jobsOutage.killedAt + 5_000), 'Canary'),
      'canary tickets',
    );
    await sleep(jobsOutage.missedMinute + 8_000 - Date.now());
    for (;;) {
      await waitForPostgres();
      jobsOutage.restartedAt = Date.now();
      jobs = spawn(['jobs']);
      const started = await eventually(
        () =>
          jobs.output().includes('jobs runner started') ? 'up' : !jobs.running() ? 'died' : null,
        'the jobs runner to start',
        PROCESS_PATIENCE,
      );
      if (started === 'up') return;
    }
  }

  let arrivalsDone = false;
  async function arrive(policy: Parameters<typeof ticketsDueInsert>[1]): Promise<void> {
    const base = Date.now() - 3_600_000; // a moved clock, an hour back: cron never sees these
    const start = Date.now();
    for (let i = 0; i < CHUNKS; i++) {
      const due = new Date(base + i * 1000);
      await persist(
        () =>
          inTransaction(pool, async (tx) => {
            await ticketsDueInsert(tx, policy, CHUNK, due, `Chaos ${i}`);
            const recorded = await breachRecordDue(tx, new Date(due.getTime() + 500), CHUNK);
            if (recorded.length !== CHUNK)
              throw new Error(`chunk ${i}: ${recorded.length} breaches`);
          }),
        `arrival chunk ${i}`,
      );
      if (i === CHUNKS / 2) {
        await persist(
          () =>
            pool.query(
              `select pgque.send($1, 'ticket.sla_breached', '{"version": 1, "ticket_id": "not a number"}'::text)`,
              [NOTIFICATIONS_QUEUE],
            ),
          'the invalid event',
        );
      }
      await sleep(Math.max(0, start + (i + 1) * CHUNK_EVERY_MS - Date.now()));
    }
    arrivalsDone = true;
  }

  async function chaos(): Promise<void> {
    const steps: [number, () => Promise<void>][] = [
      [5_000, () => killWorker(false)],
      [12_000, () => killWorker(true)],
      [19_000, () => stopWorker()],
      [30_000, () => killTickerLeader()],
      [36_000, () => restartPostgres()],
      [48_000, () => killWorker(false)],
      [55_000, () => killWorker(true)],
      [61_000, () => terminateWorker()],
      [66_000, () => killWorker(false)],
    ];
    const start = Date.now();
    for (const [offset, step] of steps) {
      await sleep(Math.max(0, start + offset - Date.now()));
      await step();
    }
  }

  const delivered = async () => {
    const { rows } = await pool.query(
      `select (select count(*) from stega.sla_breaches)::int as breaches,
              (select count(*) from stega.alert_deliveries where status = 'delivered')::int as delivered`,
    );
    return { breaches: Number(rows[0]?.breaches), delivered: Number(rows[0]?.delivered) };
  };

  const figures: Record<string, unknown> = { seed };

  it(
    'delivers every breach through the faults',
    async () => {
      const policy = await alertPolicyInsert(pool, {
        in_app: true,
        email: ['oncall@chaos.test'],
        webhooks: [{ url: hook.url, secret: 'chaos-secret-0123456789' }],
      });
      await eventually(
        async () => {
          const { rows } = await pool.query(
            "select count(*)::int as n from pgque.get_consumer_info($1) where consumer_name like $2 || '.%'",
            [NOTIFICATIONS_QUEUE, SLA_GROUP],
          );
          return Number(rows[0]?.n) === WORKERS && jobs.output().includes('jobs runner started');
        },
        'every process to be up',
        { ...PROCESS_PATIENCE, timeoutMs: 90_000 },
      );

      const began = Date.now();
      await Promise.all([arrive(policy), chaos(), jobsChaos(policy)]);
      expect(arrivalsDone).toBe(true);
      for (const { process: worker } of workers.values()) expect(worker.running()).toBe(true);

      await eventually(
        async () => {
          const { breaches, delivered: n } = await delivered();
          return breaches >= CHUNKS * CHUNK + CANARIES && n === breaches * 3;
        },
        'every breach to have its three deliveries',
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
      figures.runMs = Date.now() - began;
    },
    SUITE_MS,
  );

  it('every breach has one in-app alert, and its email and webhook arrived', async () => {
    const { rows } = await pool.query(
      `select b.id,
              count(*) filter (where d.channel = 'in_app' and d.status = 'delivered')::int as in_app,
              count(*) filter (where d.channel = 'email' and d.status = 'delivered')::int as email,
              count(*) filter (where d.channel = 'webhook' and d.status = 'delivered')::int as webhook,
              (select count(*) from stega.alerts a where a.alert_type = 'breach' and a.alert_id = b.id)::int as alerts
         from stega.sla_breaches b
         left join stega.alert_deliveries d on d.alert_type = 'breach' and d.alert_id = b.id
        group by b.id`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(CHUNKS * CHUNK + CANARIES);
    const incomplete = rows.filter(
      (r) => r.in_app !== 1 || r.email !== 1 || r.webhook !== 1 || r.alerts !== 1,
    );
    expect(incomplete).toEqual([]);

    const ids = rows.map((r) => Number(r.id));
    const mailKeys = new Set(smtp.messages.map((m) => m.header('x-stega-alert')));
    expect(ids.filter((id) => !mailKeys.has(`breach-${id}`))).toEqual([]);
    const hookIds = new Set(
      hook.received.map(
        (call) => (JSON.parse(call.body) as { data: { breach_id: number } }).data.breach_id,
      ),
    );
    expect(ids.filter((id) => !hookIds.has(id))).toEqual([]);
  });

  it('no channel received an alert twice unless a kill, the stop or the restart explains it', () => {
    const mail = duplicatesOf(
      smtp.messages.map((m) => ({ key: m.header('x-stega-alert') ?? '', at: m.at })),
      faults,
    );
    const webhook = duplicatesOf(
      hook.received.map((call) => ({ key: String(call.headers['idempotency-key']), at: call.at })),
      faults,
    );
    const all = [...mail.duplicates, ...webhook.duplicates];
    expect(all.filter((d) => d.cause === undefined)).toEqual([]);
    expect(all.filter((d) => d.times.length > 2)).toEqual([]);
    // a kill or a stop resends at most the calls the worker had in flight (its
    // SLA_DELIVERY_CONCURRENCY alerts, email and webhook each), the restart as many per worker
    const hits = faults.filter((f) => f.kind === 'worker-kill' || f.kind === 'worker-stop').length;
    expect(all.length).toBeLessThanOrEqual((hits + WORKERS) * IN_FLIGHT_PER_WORKER);
    figures.resends = {
      email: mail.duplicates.length,
      webhook: webhook.duplicates.length,
      causes: all.map((d) => `${d.key} <- ${d.cause?.kind} ${d.cause?.target ?? ''}`.trim()),
    };
  });

  it('the dead letters hold only the invalid event', async () => {
    const { rows } = await pool.query(
      `select c.co_name, d.dl_reason, d.ev_data
         from pgque.dlq_inspect($1, 1000) d
         join pgque.consumer c on c.co_id = d.dl_consumer_id`,
      [NOTIFICATIONS_QUEUE],
    );
    expect(rows.map((r) => r.co_name)).toEqual([SLA_GROUP]);
    expect(String(rows[0]?.ev_data)).toContain('not a number');
  });

  it('every takeover is logged with both members and both batches', async () => {
    // a batch is acked once its alerts are recorded, and the retry loop sends a killed member's
    // claimed deliveries at once: every alert can be delivered before the dead interval hands
    // an abandoned batch over, so wait for those takeovers (the members keep polling)
    for (const fault of faults) {
      const abandonedBatch =
        fault.batch != null &&
        ((fault.kind === 'worker-kill' && fault.restartedAs !== fault.target) ||
          fault.kind === 'worker-stop');
      if (!abandonedBatch) continue;
      await eventually(
        async () =>
          (await takeovers()).some((t) => t.old === fault.target && t.oldBatch === fault.batch),
        `the takeover of ${fault.target}'s batch ${fault.batch}`,
        { ...PROCESS_PATIENCE, timeoutMs: DEAD_INTERVAL_S * 1000 * 6 },
      ).catch(() => undefined); // the assertion below names what is missing
    }
    const log = await takeovers();
    const names = new Set(byName.keys());
    for (const t of log) {
      expect(t.old).not.toBe(t.new);
      expect(names.has(t.old) && names.has(t.new), `${t.old} -> ${t.new}`).toBe(true);
      expect(t.oldBatch).toBeGreaterThan(0);
      expect(t.newBatch).toBeGreaterThan(0);
      expect(t.newBatch).not.toBe(t.oldBatch);
    }
    // a batch left by a member that never came back under its name must have been taken over
    const abandoned = faults.filter(
      (f) => (f.kind === 'worker-kill' && f.restartedAs !== f.target) || f.kind === 'worker-stop',
    );
    const latencies: number[] = [];
    for (const fault of abandoned) {
      if (fault.batch == null) continue;
      const row = log.find((t) => t.old === fault.target && t.oldBatch === fault.batch);
      expect(row, `takeover of ${fault.target}'s batch ${fault.batch}`).toBeDefined();
      if (row) latencies.push(row.takenAt - fault.at);
    }
    // every takeover is explained by a fault: a killed or stopped member, or the restart
    // (members are silent while PostgreSQL is down, so a batch may change hands after it)
    const hit = new Set(faults.map((f) => f.target));
    const restart = faults.find((f) => f.kind === 'pg-restart');
    const unexplained = log.filter(
      (t) =>
        !hit.has(t.old) &&
        !(
          restart &&
          t.takenAt >= restart.at &&
          t.takenAt <= (restart.end ?? 0) + (DEAD_INTERVAL_S + 15) * 1000
        ),
    );
    expect(unexplained).toEqual([]);
    const stopped = faults.find((f) => f.kind === 'worker-stop');
    const stoppedOutput = (byName.get(stopped?.target ?? '') ?? []).map((p) => p.output()).join('');
    expect(stoppedOutput).toMatch(/batch was no longer ours at (ack|nack)/);
    figures.takeovers = log.length;
    figures.takeoverLatencyMs = latencies;
  });

  it('the ticker leader and the jobs runner were replaced; the missed cron minute caught up', async () => {
    expect(tickerFailoverMs).toBeGreaterThanOrEqual(0);
    // canaries fell due after the runner died and before a minute it missed; the runner
    // restarted after that minute and its cron backfill ran the missed check at once:
    // before the next regular minute
    const { rows } = await pool.query(
      'select ticket_id, detected_at from stega.sla_breaches where ticket_id = any($1::bigint[])',
      [canaryIds],
    );
    expect(rows).toHaveLength(CANARIES);
    for (const row of rows) {
      const detected = (row.detected_at as Date).getTime();
      expect(detected).toBeGreaterThanOrEqual(jobsOutage.restartedAt - 1000);
      expect(detected).toBeLessThan(jobsOutage.missedMinute + 60_000);
    }
    figures.tickerFailoverMs = tickerFailoverMs;
    figures.jobsCatchUpMs =
      Math.max(...rows.map((r) => (r.detected_at as Date).getTime())) - jobsOutage.restartedAt;
  });

  it('records the figures', async () => {
    const restart = faults.find((f) => f.kind === 'pg-restart') as Fault;
    const { rows } = await pool.query(
      `select delivered_by, min(delivered_at) as first
         from stega.alert_deliveries where delivered_at > $1 group by 1`,
      [new Date(restart.end ?? 0)],
    );
    const firsts = rows.map((r) => (r.first as Date).getTime() - (restart.end ?? 0));
    figures.pgRestartMs = pgRestartMs;
    figures.firstDeliveryAfterRestartMs = Math.min(...firsts);
    const perWorker = await pool.query(
      `select delivered_by, count(*)::int as n from stega.alert_deliveries group by 1 order by 1`,
    );
    figures.deliveriesPerMember = Object.fromEntries(
      perWorker.rows.map((r) => [String(r.delivered_by), Number(r.n)]),
    );
    figures.faults = faults.map((f) => ({ ...f, at: new Date(f.at).toISOString() }));
    // warnings and errors the processes logged, by message (PostgreSQL going away, etc.)
    const logged: Record<string, number> = {};
    for (const child of everyProcess) {
      for (const line of child.logs()) {
        if (Number(line.level) < 40) continue;
        const key = `${line.level === 40 ? 'warn' : 'error'} ${line.role}: ${line.msg}`;
        logged[key] = (logged[key] ?? 0) + 1;
      }
    }
    figures.logged = logged;
    const out = path.resolve('test-results');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'chaos.json'), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`chaos figures (seed ${seed}):\n${JSON.stringify(figures, null, 2)}`);
    expect(firsts.length).toBeGreaterThan(0);
  });
});
