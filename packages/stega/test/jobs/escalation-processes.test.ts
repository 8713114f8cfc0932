import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import {
  RECEIVER_NETWORKS,
  startWebhookReceiver,
} from '../../../../test-support/webhook-receiver.js';
import { agentInsert } from '../../src/db/agents.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { escalationLevelsSchema } from '../../src/domain/escalation-policy.js';
import { createEscalationPolicy } from '../../src/services/escalations.js';
import { updatePolicy } from '../../src/services/policies.js';
import { createTicket } from '../../src/services/tickets.js';
import { killAllChildren, type StegaChild, spawnStega } from '../deploy/processes.js';
import { mailBodyOf, publishedEvents } from '../support/fixtures.js';
import { deadlineFixture } from './deadline-fixture.js';

/**
 * An escalation chain under real processes: two `stega jobs` runners, two
 * sla-breach-workers and a ticker on one database. Mid-chain, after level 0 was delivered,
 * one runner and one worker are SIGKILLed; level 1 fires at its instant from the surviving
 * runner, is delivered by the surviving worker (taking over the dead member's batch), and
 * the killed runner, restarted, catches up without firing anything again. Each level fires
 * once and each of its deliveries reaches its receiver once, with its stable key. How late
 * level 1 fired after its instant is printed, not asserted.
 */
describe('escalation chain, real runners and workers', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 6);
  const smtp = await startSmtpSink();
  const hook = await startWebhookReceiver();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-escalation-'));
  const env = {
    DATABASE_URL: db.url,
    STEGA_DATA_DIR: dir,
    SMTP_URL: smtp.url,
    SLA_DEAD_INTERVAL_SECONDS: '3',
    SLA_RETRY_TIME_SCALE: '0.05',
    STEGA_PUBLIC_URL: 'https://help.example.test',
  };
  afterAll(async () => {
    await killAllChildren();
    await pool.end();
    await smtp.stop();
    await hook.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const { admin, policy, behind } = await deadlineFixture(pool, {
    resolutionMinutes: 100_000,
    warningShare: 1,
  });
  const assignee = await agentInsert(
    pool,
    { name: 'Ana', email: 'ana@example.test' } as never,
    new Date(),
  );
  const ctx = { ...behind(0), webhookAllowedNetworks: [RECEIVER_NETWORKS] };
  const escalation = await createEscalationPolicy(ctx, {
    name: 'climb',
    levels: escalationLevelsSchema.parse([
      {
        delay_minutes: 0,
        targets: { assignee: true, channels: { webhooks: [{ url: `${hook.url}/level-0` }] } },
      },
      { delay_minutes: 60, targets: { channels: { webhooks: [{ url: `${hook.url}/level-1` }] } } },
      { delay_minutes: 600, targets: { channels: { webhooks: [{ url: `${hook.url}/level-2` }] } } },
    ]),
  });
  await updatePolicy(ctx, policy.id, { escalation_policy_id: escalation.id });

  const start = async (command: string, ready: string): Promise<StegaChild> => {
    const child = spawnStega([command], env);
    await eventually(
      () => child.logs().some((line) => line.msg === ready),
      `${command} to start`,
      PROCESS_PATIENCE,
    );
    return child;
  };
  const keysAt = (suffix: string) =>
    hook.received
      .filter((r) => r.path.endsWith(suffix))
      .map((r) => String(r.headers['idempotency-key']));

  it('fires each level once and delivers it once across a runner and a worker killed mid-chain', async () => {
    const runnerA = await start('jobs', 'jobs runner started');
    const runnerB = await start('jobs', 'jobs runner started');
    await start('ticker', 'ticker leader: ticking').catch(() => undefined);
    const worker1 = await start('sla-breach-worker', 'sla-breach-worker started');
    await start('sla-breach-worker', 'sla-breach-worker started');

    // created 61 min minus 8 s ago, first response (1 min) due 60 min minus 8 s ago: the
    // breach and level 0 are past already, level 1 (+60 min) falls due 8 s from now
    const created = await createTicket(behind(61 * 60_000 - 8_000), admin, {
      subject: 'Payroll export fails',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
      assignee_id: assignee.id,
    });
    const due = new Date(created.clocks.find((c) => c.kind === 'first_response')?.due_at as Date);
    // level 0: its webhook and the assignee's email, delivered and recorded
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select count(*)::int as n from stega.alert_deliveries
          where alert_type = 'escalation' and ticket_id = $1 and status = 'delivered'
            and channel in ('webhook', 'email')`,
          [created.id],
        );
        return rows[0]?.n === 2;
      },
      'level 0 delivered',
      PROCESS_PATIENCE,
    );
    expect(keysAt('/level-0')).toHaveLength(1);
    const mail = smtp.messages.find((m) => m.to.includes('ana@example.test'));
    expect(mailBodyOf(mail?.raw ?? '')).toContain('https://help.example.test/acknowledge?token=');
    expect(mail?.header('message-id')).toContain(
      `escalation-${created.id}-first_response-${due.getTime()}-L0-`,
    );

    // mid-chain: one runner and one worker die
    runnerA.signal('SIGKILL');
    worker1.signal('SIGKILL');
    await Promise.all([runnerA.exited, worker1.exited]);

    await eventually(() => keysAt('/level-1').length > 0, 'level 1 delivered', {
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    const { rows: firings } = await pool.query(
      'select level, fire_at, fired_at from stega.escalation_firings where ticket_id = $1 order by level',
      [created.id],
    );
    expect(firings.map((f) => f.level)).toEqual([0, 1]);
    const level1 = firings[1] as { fire_at: Date; fired_at: Date };
    expect(level1.fire_at.getTime()).toBe(due.getTime() + 60 * 60_000);
    console.log(
      `level 1 fired ${level1.fired_at.getTime() - level1.fire_at.getTime()} ms after its instant`,
    );

    // the killed runner comes back and catches up: nothing fires again
    const restartedAt = new Date();
    await start('jobs', 'jobs runner started');
    // it checks at start (catch-up); and one more check is asked for
    await pool.query(`select graphile_worker.add_job('check_sla_breaches', '{}'::json)`);
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select count(*)::int as n from stega.pipeline_log
          where kind = 'job_run' and details->>'task' = 'check_sla_breaches' and at > $1`,
          [restartedAt],
        );
        return (rows[0]?.n ?? 0) >= 1;
      },
      'a check after the restart',
      PROCESS_PATIENCE,
    );

    const again = await pool.query(
      'select level from stega.escalation_firings where ticket_id = $1 order by level',
      [created.id],
    );
    expect(again.rows.map((f) => f.level)).toEqual([0, 1]);
    const events = (
      await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_escalated')
    ).filter((e) => e.ticket_id === created.id);
    expect(events.map((e) => e.level).sort()).toEqual([0, 1]);
    // one delivery per level and receiver, with the key of (ticket, kind, due, level)
    expect(keysAt('/level-0')).toHaveLength(1);
    expect(keysAt('/level-1')).toHaveLength(1);
    expect(keysAt('/level-1')[0]).toContain(
      `escalation-${created.id}-first_response-${due.getTime()}-L1-`,
    );
    expect(keysAt('/level-2')).toHaveLength(0);
    const body = JSON.parse(
      hook.received.find((r) => r.path.endsWith('/level-1'))?.body ?? '{}',
    ) as {
      type: string;
      data: { level: number; acknowledge_url: string };
    };
    expect(body.type).toBe('ticket.sla_escalated');
    expect(body.data.level).toBe(1);
    expect(body.data.acknowledge_url).toMatch(
      /^https:\/\/help\.example\.test\/acknowledge\?token=/,
    );
    await runnerB.stop();
  }, 300_000); // processes on a loaded machine: each wait above has its own patience
});
