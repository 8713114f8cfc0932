import { expect } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import {
  consumers,
  type FailoverRun,
  MEMBERS,
  NOTIFICATION_CONSUMER,
  SLA_GROUP,
} from './scenario.js';

/**
 * Every breach on the new primary has one in-app alert and its email and webhook delivered
 * and received; every clock of a ticket that exists fell due and has its breach.
 */
export async function alertsCheck(run: FailoverRun): Promise<Record<string, unknown>> {
  const { rows } = await run.pool.query(
    `select b.id,
            count(*) filter (where d.channel = 'in_app' and d.status = 'delivered')::int as in_app,
            count(*) filter (where d.channel = 'email' and d.status = 'delivered')::int as email,
            count(*) filter (where d.channel = 'webhook' and d.status = 'delivered')::int as webhook,
            (select count(*) from stega.alerts a where a.alert_type = 'breach' and a.alert_id = b.id)::int as alerts
       from stega.sla_breaches b
       left join stega.alert_deliveries d on d.alert_type = 'breach' and d.alert_id = b.id
      group by b.id`,
  );
  expect(rows.length).toBeGreaterThan(0);
  const incomplete = rows.filter(
    (r) => r.in_app !== 1 || r.email !== 1 || r.webhook !== 1 || r.alerts !== 1,
  );
  expect(incomplete).toEqual([]);
  const ids = rows.map((r) => Number(r.id));
  const mailed = new Set(run.emails.map((m) => m.alert));
  expect(ids.filter((id) => !mailed.has(`breach-${id}`))).toEqual([]);
  const hooked = new Set(run.webhooks.map((w) => w.breachId));
  expect(ids.filter((id) => !hooked.has(id))).toEqual([]);
  const undetected = await run.pool.query(
    `select c.ticket_id from stega.sla_clocks c
      where c.kind = 'first_response' and c.due_at <= now()
        and not exists (select 1 from stega.sla_breaches b
                         where b.ticket_id = c.ticket_id and b.kind = c.kind and b.due_at = c.due_at)`,
  );
  expect(undetected.rows).toEqual([]);
  return {
    breaches: ids.length,
    emailsReceived: run.emails.length,
    webhooksReceived: run.webhooks.length,
  };
}

/**
 * Keys received more than once (email Message-ID, webhook Idempotency-Key), and alerts (one
 * ticket's clock at one due instant) that reached the webhook under more than one breach id.
 */
export function duplicateKeys(run: FailoverRun) {
  const byKey = new Map<string, number[]>();
  for (const receipt of [...run.emails, ...run.webhooks]) {
    byKey.set(receipt.key, [...(byKey.get(receipt.key) ?? []), receipt.at]);
  }
  const sameKey = [...byKey.entries()]
    .filter(([, times]) => times.length > 1)
    .map(([key, times]) => ({ key, times: [...times].sort((a, b) => a - b) }));
  const byAlert = new Map<string, Set<number>>();
  for (const w of run.webhooks) {
    const set = byAlert.get(w.alert ?? '') ?? new Set<number>();
    set.add(w.breachId ?? 0);
    byAlert.set(w.alert ?? '', set);
  }
  const otherKey = [...byAlert.entries()]
    .filter(([, ids]) => ids.size > 1)
    .map(([alert, ids]) => ({ alert, breachIds: [...ids].sort((a, b) => a - b) }));
  // one key for two different alerts: ids handed out again after a crash lost their rows
  const alertOfKey = new Map<string, Set<string>>();
  for (const w of run.webhooks) {
    alertOfKey.set(w.key, (alertOfKey.get(w.key) ?? new Set()).add(w.alert ?? ''));
  }
  const collisions = [...alertOfKey.entries()]
    .filter(([, alerts]) => alerts.size > 1)
    .map(([key, alerts]) => ({ key, alerts: [...alerts] }));
  return { sameKey, otherKey, collisions };
}

/**
 * No process was restarted, and each did its work on the new primary: the tickers elected
 * one leader again and it ticks, every member is registered, heard from and re-LISTENed
 * (and delivered: deliveryFigures), the notification-worker consumed past the promotion,
 * graphile-worker ran a job queued after it, web answers.
 */
export async function processesCheck(run: FailoverRun): Promise<Record<string, unknown>> {
  for (const child of run.processes) {
    expect(
      child.running(),
      `${child.command} is still running; its last output:\n${child.output().slice(-3000)}`,
    ).toBe(true);
    expect(child.pid).toBe(run.startPids.get(child));
  }
  const tickers = run.processes.filter((p) => p.command === 'ticker');
  const leadership = tickers.map((t) =>
    t.logs().filter((l) => String(l.msg).startsWith('ticker leadership')),
  );
  expect(
    leadership.filter((changes) => changes.at(-1)?.msg === 'ticker leadership acquired'),
  ).toHaveLength(1);
  const reacquired = leadership
    .flat()
    .filter((l) => l.msg === 'ticker leadership acquired' && Number(l.time) >= run.killedAt);
  expect(reacquired.length).toBeGreaterThan(0);
  const ticks = await run.pool.query(
    `select count(*)::int as n from pgque.tick t join pgque.queue q on q.queue_id = t.tick_queue
      where q.queue_name = $1 and t.tick_time >= $2`,
    [NOTIFICATIONS_QUEUE, new Date(run.promotedAt)],
  );
  expect(Number(ticks.rows[0]?.n)).toBeGreaterThan(0);

  const members = (await consumers(run.pool)).filter((c) => c.name.startsWith(`${SLA_GROUP}.`));
  expect(members.map((m) => m.name).sort()).toEqual(MEMBERS.map((m) => `${SLA_GROUP}.${m}`).sort());
  // heard from within the dead interval (10 s): no batch of a live member gets taken over
  for (const m of members) expect(m.lastSeenS, m.name).toBeLessThan(10);
  const takeovers = await run.pool.query(
    'select count(*)::int as n from pgque.get_coop_takeovers($1, $2, 1000)',
    [NOTIFICATIONS_QUEUE, SLA_GROUP],
  );

  // LISTEN again on the new primary: each consumer process logged its listener back, and
  // the sessions are there
  const listeners = run.processes.filter(
    (p) => p.command === 'sla-breach-worker' || p.command === 'notification-worker',
  );
  for (const child of listeners) {
    const restored = child
      .logs()
      .filter(
        (l) => l.msg === 'notification connection restored' && Number(l.time) >= run.killedAt,
      );
    expect(restored.length, `${child.command} ${child.pid} re-LISTENed`).toBeGreaterThan(0);
  }
  const listening = await run.pool.query(
    "select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen %pgque%'",
  );
  expect(Number(listening.rows[0]?.n)).toBeGreaterThanOrEqual(listeners.length);

  await eventually(
    async () =>
      (await consumers(run.pool)).find((c) => c.name === NOTIFICATION_CONSUMER)?.pending === 0,
    'the notification-worker to consume past the promotion',
    { ...PROCESS_PATIENCE, timeoutMs: 30_000 },
  );
  expect(run.jobAfterPromotion).toBe(true);
  expect(run.healthAfterPromotion).toBe(200);
  expect(run.apiAfterPromotion).toBe(200);

  const reconnects: Record<string, number> = {};
  for (const child of run.processes) {
    const first = child
      .logs()
      .find(
        (l) =>
          Number(l.time) >= run.promotedAt &&
          Number(l.level) >= 30 &&
          /restored|acquired|delivered|started/.test(String(l.msg)),
      );
    if (first) reconnects[`${child.command}#${child.pid}`] = Number(first.time) - run.killedAt;
  }
  return {
    takeovers: Number(takeovers.rows[0]?.n),
    listeningSessions: Number(listening.rows[0]?.n),
    killToLogLineMs: reconnects,
  };
}
