import { afterAll, describe, expect, it } from 'vitest';
import {
  RECEIVER_NETWORKS,
  startWebhookReceiver,
} from '../../../../test-support/webhook-receiver.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { AlertDelivery } from '../../src/delivery/alert-delivery.js';
import { escalationLevelsSchema } from '../../src/domain/escalation-policy.js';
import { slaEscalatedEvent } from '../../src/events.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { createLogger } from '../../src/log.js';
import { ackLinksOpen } from '../../src/services/acknowledge-links.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { acknowledgeAsActor, createEscalationPolicy } from '../../src/services/escalations.js';
import { updatePolicy } from '../../src/services/policies.js';
import { createTicket } from '../../src/services/tickets.js';
import { TestClock } from '../http/app-fixture.js';
import { deadlineFixture } from '../jobs/deadline-fixture.js';
import { agentInsert, mailBodyOf, publishedEvents } from '../support/fixtures.js';
import { mailScene } from '../support/mail-scene.js';

/**
 * A fired level through the sla-breach-worker's delivery: its agents get an in-app alert and
 * an email carrying a signed acknowledge link, its channels (here an address and a webhook)
 * their deliveries, all ledger rows of alert type `escalation` keyed by ticket, kind, due
 * instant and level. An acknowledgement cancels the level's deliveries still retrying.
 */
describe('escalation level delivery', async () => {
  const { pool, smtp, email } = await mailScene(4);
  const hook = await startWebhookReceiver();
  afterAll(async () => {
    await hook.stop();
  });
  const links = await ackLinksOpen(pool, {
    publicUrl: 'https://help.example.test',
    secret: undefined,
    linkHours: 72,
  });
  const delivery = new AlertDelivery({
    pool,
    email,
    emailEndpoint: smtp.url,
    webhookTimeoutMs: 2000,
    webhookAllowedNetworks: [RECEIVER_NETWORKS],
    publicUrl: 'https://help.example.test',
    deliveredBy: 'test-worker',
    timeScale: 1,
    circuitFailures: 100,
    circuitProbeSeconds: 10,
    logger: createLogger('silent', 'test'),
    ackLinks: links,
  });

  const { admin, policy } = await deadlineFixture(pool, {
    resolutionMinutes: 100_000,
    warningShare: 1,
  });
  const clock = new TestClock(new Date('2026-04-01T09:00:00Z'));
  const ctx: ServiceContext = {
    pool,
    now: clock.now,
    warningShare: 1,
    webhookAllowedNetworks: [RECEIVER_NETWORKS],
  };
  const agent = await agentInsert(pool, 'Olga Oncall');
  const agentEmail = String(
    (await pool.query('select email from stega.agents where id = $1', [agent])).rows[0]?.email,
  );
  const escalation = await createEscalationPolicy(ctx, {
    name: 'deliver',
    levels: escalationLevelsSchema.parse([
      {
        delay_minutes: 0,
        targets: {
          agents: [agent],
          channels: { email: ['duty@example.test'], webhooks: [{ url: `${hook.url}/level` }] },
        },
      },
      { delay_minutes: 30, targets: { agents: [agent] } },
    ]),
  });
  await updatePolicy(ctx, policy.id, { escalation_policy_id: escalation.id });

  it('delivers a level to its agents and channels with stable keys; an acknowledgement cancels what is still retrying', async () => {
    const ticket = await createTicket(ctx, admin, {
      subject: 'Backups failing',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
    });
    const due = new Date(ticket.clocks.find((c) => c.kind === 'first_response')?.due_at as Date);
    hook.down(503);
    await checkSlaBreaches(pool, due);
    const [event] = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_escalated'))
      .map((e) => slaEscalatedEvent.parse(e))
      .filter((e) => e.ticket_id === ticket.id);
    if (!event) throw new Error('no ticket.sla_escalated event');
    await delivery.deliver({ type: 'escalation', payload: event }, { batchId: 1n, eventId: 1n });

    const { rows } = await pool.query(
      `select channel, recipient, status from stega.alert_deliveries
        where alert_type = 'escalation' and alert_id = $1 order by channel, recipient`,
      [event.firing_id],
    );
    expect(rows.map((r) => [r.channel, r.recipient, r.status])).toEqual([
      ['email', 'duty@example.test', 'delivered'],
      ['email', agentEmail, 'delivered'],
      ['in_app', `agent:${agent}`, 'delivered'],
      ['webhook', `${hook.url}/level`, 'retrying'],
    ]);
    const inApp = await pool.query(
      `select agent_id, message from stega.alerts where alert_type = 'escalation' and alert_id = $1`,
      [event.firing_id],
    );
    expect(inApp.rows).toHaveLength(1);
    expect(inApp.rows[0]?.message).toContain('escalation level 0');

    const mail = smtp.messages.find((m) => m.to.includes(agentEmail));
    const key = `escalation-${ticket.id}-first_response-${due.getTime()}-L0-`;
    expect(mail?.header('message-id')).toContain(key);
    const link = /https:\/\/help\.example\.test\/acknowledge\?token=(\S+)/.exec(
      mailBodyOf(mail?.raw ?? ''),
    )?.[1];
    const check = links.verify(decodeURIComponent(link ?? ''), clock.now());
    expect(check).toMatchObject({
      ok: true,
      claims: { ticketId: ticket.id, kind: 'first_response', recipient: agentEmail },
    });
    if (check.ok) expect(check.claims.dueAt.getTime()).toBe(due.getTime());

    // the webhook is down: its delivery retries; acknowledging stops it
    const chain = await pool.query('select id from stega.escalations where ticket_id = $1', [
      ticket.id,
    ]);
    const olga: Actor = { role: 'agent', name: 'Olga Oncall', agentId: agent, tokenId: null };
    clock.set(new Date(due.getTime() + 60_000));
    await acknowledgeAsActor(ctx, Number(chain.rows[0]?.id), olga, 'api');
    const after = await pool.query(
      `select status, last_error from stega.alert_deliveries
        where alert_type = 'escalation' and alert_id = $1 and channel = 'webhook'`,
      [event.firing_id],
    );
    expect(after.rows[0]).toMatchObject({
      status: 'cancelled',
      last_error: 'cancelled: acknowledged by Olga Oncall',
    });
    hook.up();
  });
});
