import { afterAll, describe, expect, it } from 'vitest';
import {
  startPagerDutyReceiver,
  startSlackReceiver,
} from '../../../../test-support/service-receivers.js';
import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { pagerDutyAcknowledgeRecord } from '../../src/db/pagerduty-events.js';
import { AlertDelivery } from '../../src/delivery/alert-delivery.js';
import { startDeliveryRetrier } from '../../src/delivery/retrier.js';
import { escalationLevelsSchema } from '../../src/domain/escalation-policy.js';
import { slaAcknowledgedEvent, slaBreachedEvent, slaEscalatedEvent } from '../../src/events.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { createLogger } from '../../src/log.js';
import { ackLinksOpen } from '../../src/services/acknowledge-links.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import {
  acknowledgeAsActor,
  createEscalationPolicy,
  listTicketEscalations,
} from '../../src/services/escalations.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { createTicket } from '../../src/services/tickets.js';
import { TestClock } from '../http/app-fixture.js';
import { soleEscalatingPolicy } from '../support/escalating-policy.js';
import { agentInsert, publishedEvents } from '../support/fixtures.js';
import { mailScene } from '../support/mail-scene.js';

const KEY_SLA = 'S0123456789abcdefABCDEF01234sssa';
const KEY_LEVEL = 'L0123456789abcdefABCDEF01234lllb';
const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };

type Event = { event_action: string; dedup_key: string; routing_key: string };

/**
 * Chat and on-call channels with escalations: a breach's Slack message carries the chain's
 * signed acknowledge link, an escalation level posts to its own Slack channel and pages its
 * own PagerDuty service, an acknowledgement is mirrored to both pages (as the
 * sla-breach-worker does on ticket.sla_acknowledged), and resolving the ticket resolves both.
 */
describe('chat channels of escalations', async () => {
  const { pool, smtp, email } = await mailScene(6);
  const slack = await startSlackReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  const logger = createLogger('silent', 'test');
  const clock = new TestClock(new Date('2026-03-02T09:00:00Z'));
  const ctx: ServiceContext = {
    pool,
    now: clock.now,
    warningShare: 1,
    webhookAllowedNetworks: [RECEIVER_NETWORKS],
  };
  const ackLinks = await ackLinksOpen(pool, {
    publicUrl: 'https://help.example.test',
    secret: 'a-test-ack-secret-0123456789abcdef',
    linkHours: 24,
  });
  const delivery = new AlertDelivery({
    pool,
    email,
    emailEndpoint: smtp.url,
    webhookTimeoutMs: 2000,
    webhookAllowedNetworks: [RECEIVER_NETWORKS],
    pagerDutyEventsUrl: pagerDuty.urlOf('/v2/enqueue'),
    publicUrl: 'https://help.example.test',
    ackLinks,
    deliveredBy: 'worker-1',
    timeScale: 0.01,
    circuitFailures: 50,
    circuitProbeSeconds: 10,
    logger,
  });
  const retrier = startDeliveryRetrier({
    pool,
    delivery,
    concurrency: 4,
    pollMs: 20,
    probeSeconds: 0.1,
    logger,
  });
  afterAll(async () => {
    await retrier.stop();
    await Promise.all([slack.stop(), pagerDuty.stop()]);
  });

  const assignee = await agentInsert(pool, 'Ana Assignee');
  const escalation = await createEscalationPolicy(ctx, {
    name: 'page the on-call',
    levels: escalationLevelsSchema.parse([
      {
        delay_minutes: 0,
        targets: {
          channels: {
            slack: [{ url: slack.urlOf('/level0'), label: '#on-call' }],
            pagerduty: [{ routing_key: KEY_LEVEL }],
          },
        },
      },
      { delay_minutes: 30, targets: { assignee: true } },
    ]),
  });
  await soleEscalatingPolicy(ctx, escalation.id, {
    in_app: false,
    slack: [{ url: slack.urlOf('/support') }],
    pagerduty: [{ routing_key: KEY_SLA }],
  });

  it('acknowledge buttons, level pages, the acknowledgement mirrored and the resolve, each once', async () => {
    const ticket = await createTicket(ctx, admin, {
      subject: 'Mail server down',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
      assignee_id: assignee,
    });
    const due = ticket.clocks.find((c) => c.kind === 'first_response')?.due_at as Date;
    expect(await checkSlaBreaches(pool, due)).toMatchObject({ breaches: 1, escalations: 1 });
    const breach = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_breached'))
      .map((e) => slaBreachedEvent.parse(e))
      .find((e) => e.ticket_id === ticket.id);
    const level0 = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_escalated'))
      .map((e) => slaEscalatedEvent.parse(e))
      .find((e) => e.ticket_id === ticket.id && e.level === 0);
    if (!breach || !level0) throw new Error('no breach or level event');
    // what the sla-breach-worker's handlers do with the two events
    await delivery.deliver({ type: 'breach', payload: breach }, { batchId: 1n, eventId: 1n });
    await delivery.deliver({ type: 'escalation', payload: level0 }, { batchId: 1n, eventId: 2n });

    // the breach's Slack message: an Acknowledge button with the chain's signed link, for chat
    const support = slack.accepted.filter((c) => c.path === '/support');
    expect(support).toHaveLength(1);
    const buttons = (
      (support[0]?.json ?? { blocks: [] }) as {
        blocks: { type: string; elements?: { action_id: string; url: string }[] }[];
      }
    ).blocks.find((b) => b.type === 'actions')?.elements;
    const ack = buttons?.find((b) => b.action_id === 'acknowledge');
    expect(ack?.url).toMatch(/^https:\/\/help\.example\.test\/acknowledge\?token=/);
    const token = decodeURIComponent(new URL(ack?.url ?? 'x:').searchParams.get('token') ?? '');
    const checked = ackLinks.verify(token, clock.now());
    expect(checked).toMatchObject({
      ok: true,
      claims: { ticketId: ticket.id, kind: 'first_response', recipient: 'chat:slack' },
    });
    // the level's own channel, its title naming the level
    const onCall = slack.accepted.filter((c) => c.path === '/level0');
    expect(onCall).toHaveLength(1);
    expect(JSON.stringify(onCall[0]?.json)).toContain('escalation level 0');

    const dueMs = new Date(breach.due_at).getTime();
    const breachKey = `stega-${ticket.id}-first_response-${dueMs}-breach`;
    const levelKey = `stega-${ticket.id}-first_response-${dueMs}-L0`;
    const triggers = pagerDuty.accepted.map((c) => c.json as Event);
    expect(triggers.map((e) => [e.routing_key, e.event_action, e.dedup_key]).sort()).toEqual(
      [
        [KEY_LEVEL, 'trigger', levelKey],
        [KEY_SLA, 'trigger', breachKey],
      ].sort(),
    );

    // acknowledged in the app: the chain stops, the event is published in that transaction
    const [chain] = await listTicketEscalations(ctx, ticket.id);
    await acknowledgeAsActor(ctx, chain?.id as number, admin, 'app');
    const acknowledged = (
      await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_acknowledged')
    )
      .map((e) => slaAcknowledgedEvent.parse(e))
      .find((e) => e.ticket_id === ticket.id);
    if (!acknowledged) throw new Error('no acknowledgement event');
    // what the sla-breach-worker does with it (processes/sla-breach-worker.ts)
    const record = () =>
      pagerDutyAcknowledgeRecord(pool, {
        breachId: acknowledged.breach_id,
        by: acknowledged.acknowledged_by.name,
        at: new Date(acknowledged.acknowledged_at),
      });
    expect(await record()).toBe(2);
    expect(await record()).toBe(0); // a redelivered event records nothing more
    await pagerDuty.until(
      (calls) => calls.filter((c) => (c.json as Event).event_action === 'acknowledge').length >= 2,
    );

    // resolved: both pages resolved, the level's too (the stopped chain does not cancel it)
    await transitionTicket(ctx, admin, ticket.id, 'resolved');
    await pagerDuty.until(
      (calls) => calls.filter((c) => (c.json as Event).event_action === 'resolve').length >= 2,
    );
    const statuses = async () =>
      (
        await pool.query(
          `select recipient, status from stega.alert_deliveries
            where ticket_id = $1 and channel = 'pagerduty' order by recipient`,
          [ticket.id],
        )
      ).rows.map((r) => [String(r.recipient).split(':')[0], r.status]);
    // the answers are in; their outcomes are recorded just after
    await expect.poll(statuses, { timeout: 20_000 }).toEqual([
      ['acknowledge', 'delivered'],
      ['acknowledge', 'delivered'],
      ['resolve', 'delivered'],
      ['resolve', 'delivered'],
      ['trigger', 'delivered'],
      ['trigger', 'delivered'],
    ]);
    const events = pagerDuty.accepted.map((c) => c.json as Event);
    for (const [key, dedup] of [
      [KEY_SLA, breachKey],
      [KEY_LEVEL, levelKey],
    ]) {
      expect(
        events.filter((e) => e.routing_key === key).map((e) => [e.event_action, e.dedup_key]),
      ).toEqual([
        ['trigger', dedup],
        ['acknowledge', dedup],
        ['resolve', dedup],
      ]);
    }
  });

  it('a ticket resolved while its chain runs resolves the level’s page too', async () => {
    clock.set('2026-03-03T09:00:00Z');
    const ticket = await createTicket(ctx, admin, {
      subject: 'Printer down',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
      assignee_id: assignee,
    });
    const due = ticket.clocks.find((c) => c.kind === 'first_response')?.due_at as Date;
    await checkSlaBreaches(pool, due);
    const level0 = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_escalated'))
      .map((e) => slaEscalatedEvent.parse(e))
      .find((e) => e.ticket_id === ticket.id && e.level === 0);
    if (!level0) throw new Error('no level event');
    await delivery.deliver({ type: 'escalation', payload: level0 }, { batchId: 2n, eventId: 3n });
    const levelKey = `stega-${ticket.id}-first_response-${new Date(level0.due_at).getTime()}-L0`;
    expect((await listTicketEscalations(ctx, ticket.id))[0]?.state).toBe('running');
    await transitionTicket(ctx, admin, ticket.id, 'resolved');
    await pagerDuty.until((calls) =>
      calls.some(
        (c) =>
          (c.json as Event).event_action === 'resolve' && (c.json as Event).dedup_key === levelKey,
      ),
    );
    expect(
      pagerDuty.accepted
        .map((c) => c.json as Event)
        .filter((e) => e.dedup_key === levelKey)
        .map((e) => e.event_action),
    ).toEqual(['trigger', 'resolve']);
  });

  it('a level handled after the acknowledgement was mirrored: its page is acknowledged too', async () => {
    clock.set('2026-03-04T09:00:00Z');
    const ticket = await createTicket(ctx, admin, {
      subject: 'VPN down',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
      assignee_id: assignee,
    });
    const due = ticket.clocks.find((c) => c.kind === 'first_response')?.due_at as Date;
    await checkSlaBreaches(pool, due);
    const level0 = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_escalated'))
      .map((e) => slaEscalatedEvent.parse(e))
      .find((e) => e.ticket_id === ticket.id && e.level === 0);
    if (!level0) throw new Error('no level event');
    // one member handles ticket.sla_acknowledged before another gets to the level's event
    const [chain] = await listTicketEscalations(ctx, ticket.id);
    await acknowledgeAsActor(ctx, chain?.id as number, admin, 'app');
    expect(
      await pagerDutyAcknowledgeRecord(pool, {
        breachId: level0.breach_id,
        by: 'admin',
        at: clock.now(),
      }),
    ).toBe(0); // the level's page is not recorded yet: nothing to acknowledge
    await delivery.deliver({ type: 'escalation', payload: level0 }, { batchId: 3n, eventId: 4n });
    const levelKey = `stega-${ticket.id}-first_response-${new Date(level0.due_at).getTime()}-L0`;
    await pagerDuty.until((calls) =>
      calls.some(
        (c) =>
          (c.json as Event).event_action === 'acknowledge' &&
          (c.json as Event).dedup_key === levelKey,
      ),
    );
    expect(
      pagerDuty.accepted
        .map((c) => c.json as Event)
        .filter((e) => e.dedup_key === levelKey)
        .map((e) => e.event_action),
    ).toEqual(['trigger', 'acknowledge']);
  });
});
