import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';
import { escalationStartForBreaches } from '../../src/db/escalations.js';
import { pagerDutyAcknowledgeRecord } from '../../src/db/pagerduty-events.js';
import { escalationLevelsSchema } from '../../src/domain/escalation-policy.js';
import type { SlaBreachedEvent } from '../../src/events.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { acknowledgeTicket, createEscalationPolicy } from '../../src/services/escalations.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { fallbackScene } from '../support/fallback-scene.js';
import { agentInsert, calendarInsert24x7 } from '../support/fixtures.js';

type PagerDutyCall = { event_action: string; dedup_key: string; routing_key: string };

/**
 * A fallback is for an alert that reached nobody: acknowledged, answered or resolved before
 * its deadline, its waiting fallback page is cancelled with the reason and never sent, while
 * the primary that failed goes on being retried. The policies here have a primary webhook that
 * answers 500 forever and a fallback PagerDuty service (a key per test); the tests move the
 * fallback's deadline to now instead of waiting for it.
 */
describe('fallbacks cancelled by an acknowledgement or a resolution', async () => {
  const { pool, pagerDuty, brokenHook, delivery, retrier } = await fallbackScene();

  const calendarId = await calendarInsert24x7(pool);
  const agentId = await agentInsert(pool, 'Carla Dias');
  const now = new Date();
  const ctx: ServiceContext = {
    pool,
    now: () => new Date(),
    warningShare: 0.8,
    webhookAllowedNetworks: [RECEIVER_NETWORKS],
  };
  const carla: Actor = { role: 'agent', name: 'Carla Dias', agentId, tokenId: null };
  // a chain that only starts (its one level is far away), so the breach can be acknowledged
  const escalation = await createEscalationPolicy(ctx, {
    name: 'on call',
    levels: escalationLevelsSchema.parse([
      { delay_minutes: 10_000, targets: { agents: [agentId] } },
    ]),
  });
  const breachUnder = breachUnderPolicy({ db: pool, calendarId, agentId, now, label: 'cancel' });

  /**
   * A breach under a policy: webhook failing forever, fallback PagerDuty `key`; its chain
   * started; `beforeDelivery` done; its alert delivered.
   */
  const failingBreach = async (
    key: string,
    beforeDelivery?: (event: SlaBreachedEvent) => Promise<void>,
  ): Promise<SlaBreachedEvent> => {
    const event = await breachUnder({
      in_app: false,
      webhooks: [{ url: brokenHook.urlOf(`/alerts/${key}`) }],
      retry: { delays_seconds: [5] }, // 50 ms scaled: the retry loop passes often
      fallback: { after_minutes: 60, pagerduty: [{ routing_key: key }] },
    });
    await pool.query(
      `update stega.sla_policies set escalation_policy_id = $2
        where id = (select policy_id from stega.tickets where id = $1)`,
      [event.ticket_id, escalation.id],
    );
    expect(await escalationStartForBreaches(pool, [event.breach_id], now)).toBe(1);
    await beforeDelivery?.(event);
    await delivery('worker').deliver(
      { type: 'breach', payload: event },
      { batchId: 1n, eventId: BigInt(event.breach_id) },
    );
    return event;
  };
  const rowsOf = async (alertId: number) =>
    (
      await pool.query(
        `select channel, case when channel = 'pagerduty' then split_part(recipient, ':', 1) end as action,
                fallback, status, attempts,
                last_error
           from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1
          order by fallback, channel, recipient`,
        [alertId],
      )
    ).rows;
  const fallbackOf = async (alertId: number) =>
    (await rowsOf(alertId)).find((r) => r.fallback && r.action === 'trigger');
  /** The fallback's deadline passes (whatever its state now): due now, and the retry loop looks. */
  const passDeadline = async (alertId: number) => {
    await pool.query(
      `update stega.alert_deliveries set next_attempt_at = now()
        where alert_type = 'breach' and alert_id = $1 and fallback and recipient like 'trigger:%'`,
      [alertId],
    );
    retrier.wake();
  };
  const webhookAttempts = async (alertId: number) =>
    Number(
      (
        await pool.query(
          `select attempts from stega.alert_deliveries
            where alert_type = 'breach' and alert_id = $1 and channel = 'webhook'`,
          [alertId],
        )
      ).rows[0]?.attempts,
    );
  /** The retry loop has passed at least twice more over the failing primary since now. */
  const twoMorePasses = async (alertId: number) => {
    const attempts = await webhookAttempts(alertId);
    await eventually(
      async () => (await webhookAttempts(alertId)) >= attempts + 2,
      'two more attempts of the failing webhook',
    );
  };
  const pagesTo = (key: string) =>
    pagerDuty.calls.map((c) => c.json as PagerDutyCall).filter((e) => e.routing_key === key);

  it('acknowledged through the API before the deadline: the fallback page is cancelled, saying who, and PagerDuty is never called', async () => {
    const key = 'A0123456789abcdefABCDEF01234aaaa';
    const event = await failingBreach(key);
    expect(await fallbackOf(event.breach_id)).toMatchObject({ status: 'scheduled' });

    // what POST /api/tickets/{id}/acknowledge calls
    const acks = await acknowledgeTicket(ctx, event.ticket_id, carla, 'api');
    expect(acks.map((a) => a.changed)).toEqual([true]);
    expect(await fallbackOf(event.breach_id)).toMatchObject({
      status: 'cancelled',
      attempts: 0,
      last_error: 'cancelled: acknowledged by Carla Dias before the fallback deadline',
    });

    await passDeadline(event.breach_id);
    await twoMorePasses(event.breach_id);
    expect(pagesTo(key)).toEqual([]);
    // the sla-breach-worker's mirror of the acknowledgement finds no page to acknowledge
    expect(
      await pagerDutyAcknowledgeRecord(pool, {
        breachId: event.breach_id,
        by: 'Carla Dias',
        at: new Date(),
      }),
    ).toBe(0);
    const rows = await rowsOf(event.breach_id);
    expect(rows.map((r) => [r.channel, r.action, r.fallback, r.status])).toEqual([
      ['webhook', null, false, expect.stringMatching(/^(retrying|sending)$/)],
      ['pagerduty', 'trigger', true, 'cancelled'],
    ]);
    // what GET /api/tickets/{id} (and the ticket page) shows: the reason, and no fallback fired
    const { deliveries } = await getTicket(ctx, event.ticket_id, carla);
    expect(deliveries.map((d) => [d.channel, d.fallback, d.state, d.fell_back_to])).toEqual([
      ['webhook', false, expect.stringMatching(/^(retrying|sending)$/), []],
      ['pagerduty', true, 'cancelled', []],
    ]);
    expect(deliveries[1]?.last_error).toBe(
      'cancelled: acknowledged by Carla Dias before the fallback deadline',
    );
  });

  it('the ticket resolved before the deadline: the fallback page and the acknowledge waiting on it are cancelled, and PagerDuty is never called', async () => {
    const key = 'R0123456789abcdefABCDEF01234rrrr';
    const event = await failingBreach(key);
    // an acknowledge recorded for the page while it waits (a mirror recorded before this
    // release did so) waits for its trigger
    expect(
      await pagerDutyAcknowledgeRecord(pool, {
        breachId: event.breach_id,
        by: 'Carla Dias',
        at: new Date(),
      }),
    ).toBe(1);
    retrier.wake();
    // once it has waited (tried, found its trigger not delivered), its next try is held off,
    // so that the resolution, not that try, is what finds it
    await eventually(async () => {
      const held = await pool.query(
        `update stega.alert_deliveries set next_attempt_at = now() + interval '1 hour'
          where alert_type = 'breach' and alert_id = $1 and recipient like 'acknowledge:%'
            and status = 'retrying' and attempts >= 1 and last_error like 'waiting:%'`,
        [event.breach_id],
      );
      return held.rowCount === 1;
    }, 'the acknowledge waiting for its trigger');

    await transitionTicket(ctx, carla, event.ticket_id, 'resolved');
    const rows = await rowsOf(event.breach_id);
    expect(rows.filter((r) => r.fallback).map((r) => [r.action, r.status, r.last_error])).toEqual([
      [
        'acknowledge',
        'cancelled',
        'cancelled: the fallback page was cancelled (the ticket was resolved)',
      ],
      ['trigger', 'cancelled', 'cancelled: the ticket was resolved before the fallback deadline'],
    ]);
    // no resolve is recorded for a page that never went out
    expect(rows.some((r) => r.action === 'resolve')).toBe(false);

    await passDeadline(event.breach_id);
    await twoMorePasses(event.breach_id);
    expect(pagesTo(key)).toEqual([]);
  });

  it('the SLA met (a reply) before the deadline cancels the fallback page too', async () => {
    const key = 'M0123456789abcdefABCDEF01234mmmm';
    const event = await failingBreach(key);
    // the first reply, in time as far as this clock cycle is concerned
    await pool.query(
      `insert into stega.sla_outcomes (ticket_id, kind, started_at, due_at, stopped_at, met, decided_at)
       select ticket_id, kind, started_at, due_at, due_at, true, due_at
         from stega.sla_clocks where ticket_id = $1 and kind = 'first_response'`,
      [event.ticket_id],
    );
    expect(await fallbackOf(event.breach_id)).toMatchObject({
      status: 'cancelled',
      last_error: 'cancelled: the SLA target was met before the fallback deadline',
    });
    await passDeadline(event.breach_id);
    await twoMorePasses(event.breach_id);
    expect(pagesTo(key)).toEqual([]);
  });

  it('acknowledged before the alert was even recorded (delivered late): the fallback is cancelled at its deadline instead of paging', async () => {
    const key = 'L0123456789abcdefABCDEF01234llll';
    const event = await failingBreach(key, async (breach) => {
      const acks = await acknowledgeTicket(ctx, breach.ticket_id, carla, 'app');
      expect(acks.map((a) => a.changed)).toEqual([true]);
    });
    expect(await fallbackOf(event.breach_id)).toMatchObject({ status: 'scheduled' });
    await passDeadline(event.breach_id);
    await eventually(
      async () => (await fallbackOf(event.breach_id))?.status === 'cancelled',
      'the fallback cancelled at its deadline',
    );
    expect(await fallbackOf(event.breach_id)).toMatchObject({
      attempts: 0,
      last_error: 'cancelled: acknowledged by Carla Dias before the fallback deadline',
    });
    await twoMorePasses(event.breach_id);
    expect(pagesTo(key)).toEqual([]);
  });

  it('control: not acknowledged, the fallback pages once; acknowledged afterwards, the page is left alone and acknowledged in PagerDuty', async () => {
    const key = 'C0123456789abcdefABCDEF01234cccc';
    const event = await failingBreach(key);
    await passDeadline(event.breach_id);
    await eventually(
      async () => (await fallbackOf(event.breach_id))?.status === 'delivered',
      'the fallback page',
    );
    await twoMorePasses(event.breach_id);
    expect(pagesTo(key).map((e) => e.event_action)).toEqual(['trigger']);

    const acks = await acknowledgeTicket(ctx, event.ticket_id, carla, 'api');
    expect(acks.map((a) => a.changed)).toEqual([true]);
    expect(await fallbackOf(event.breach_id)).toMatchObject({ status: 'delivered', attempts: 1 });
    // the sla-breach-worker's mirror of the acknowledgement
    expect(
      await pagerDutyAcknowledgeRecord(pool, {
        breachId: event.breach_id,
        by: 'Carla Dias',
        at: new Date(),
      }),
    ).toBe(1);
    retrier.wake();
    await pagerDuty.until(() => pagesTo(key).length === 2);
    expect(pagesTo(key).map((e) => e.event_action)).toEqual(['trigger', 'acknowledge']);
  });
});
