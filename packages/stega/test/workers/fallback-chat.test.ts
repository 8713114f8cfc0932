import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import {
  pagerDutyEventErrors,
  startSlackReceiver,
  startTeamsReceiver,
} from '../../../../test-support/service-receivers.js';
import { pagerDutyAcknowledgeRecord } from '../../src/db/pagerduty-events.js';
import { FALLBACK_NOTE } from '../../src/delivery/alert-facts.js';
import type { SlaBreachedEvent } from '../../src/events.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { FALLBACK_SCALE, fallbackScene } from '../support/fallback-scene.js';
import { agentInsert, calendarInsert24x7 } from '../support/fixtures.js';

const KEY_PRIMARY_AND_FALLBACK = 'F0123456789abcdefABCDEF01234ffff';
const KEY_NEVER = 'N0123456789abcdefABCDEF01234nnnn';

type PagerDutyCall = { event_action: string; dedup_key: string; routing_key: string };

/**
 * A policy's fallback to Slack, Teams and PagerDuty: scheduled with the alert, sent through
 * the ledger by the retry loop at its deadline when any remote primary (email, webhook,
 * Slack, Teams, PagerDuty) is still undelivered, cancelled when every primary delivered.
 * The tests move a fallback's deadline to now instead of waiting for it.
 */
describe('fallbacks to Slack, Teams and PagerDuty', async () => {
  const { pool, pagerDuty, brokenHook, delivery, retrier } = await fallbackScene();
  const slack = await startSlackReceiver();
  const slackDown = await startSlackReceiver();
  slackDown.down({ status: 500, body: 'internal_error' });
  const teams = await startTeamsReceiver();
  afterAll(() => Promise.all([slack.stop(), slackDown.stop(), teams.stop()]));

  const calendarId = await calendarInsert24x7(pool);
  const agentId = await agentInsert(pool, 'Carla Dias');
  const now = new Date();

  /** A ticket under a policy with `channels`, and one breach of it as its event payload. */
  const breachUnder = breachUnderPolicy({ db: pool, calendarId, agentId, now, label: 'fallback' });

  const rowsOf = async (alertId: number) =>
    (
      await pool.query(
        `select channel, recipient, fallback, status, attempts, last_error
           from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1
          order by fallback, channel, recipient`,
        [alertId],
      )
    ).rows;
  /** Channel, fallback and status of each row; a primary being retried may be mid-call (`sending`). */
  const statesOf = async (alertId: number) =>
    (await rowsOf(alertId)).map((r) => [
      r.channel,
      r.fallback,
      r.status === 'sending' ? 'retrying' : r.status,
    ]);
  /** The fallback's deadline passes: its scheduled rows are due now, and the retry loop looks. */
  const passDeadline = async (alertId: number) => {
    await pool.query(
      `update stega.alert_deliveries set next_attempt_at = now()
        where alert_type = 'breach' and alert_id = $1 and status = 'scheduled'`,
      [alertId],
    );
    retrier.wake();
  };
  const deliver = (event: SlaBreachedEvent) =>
    delivery('worker').deliver(
      { type: 'breach', payload: event },
      { batchId: 1n, eventId: BigInt(event.breach_id) },
    );
  const primaryAttempts = async (alertId: number) =>
    Number(
      (
        await pool.query(
          `select attempts from stega.alert_deliveries
            where alert_type = 'breach' and alert_id = $1 and not fallback and channel <> 'pagerduty'
              and status <> 'delivered'`,
          [alertId],
        )
      ).rows[0]?.attempts,
    );

  it('a webhook failing for good: Slack and Teams get the alert once each after the deadline', async () => {
    const event = await breachUnder({
      in_app: false,
      webhooks: [{ url: brokenHook.urlOf('/alerts') }],
      fallback: {
        after_minutes: 60,
        slack: [{ url: slack.urlOf('/services/T1/B1/fallback-1'), label: '#support' }],
        teams: [{ url: teams.urlOf('/workflows/fallback-1') }],
      },
    });
    await deliver(event);
    expect(await statesOf(event.breach_id)).toEqual([
      ['webhook', false, 'retrying'],
      ['slack', true, 'scheduled'],
      ['teams', true, 'scheduled'],
    ]);
    expect(slack.calls.filter((c) => c.path.endsWith('/fallback-1'))).toHaveLength(0);

    await passDeadline(event.breach_id);
    await eventually(async () => {
      const rows = await rowsOf(event.breach_id);
      return rows.filter((r) => r.fallback && r.status === 'delivered').length === 2;
    }, 'the fallback Slack and Teams deliveries');
    // the retry loop goes on with the primary (two more failed attempts): nothing is sent again
    const attempts = await primaryAttempts(event.breach_id);
    await eventually(
      async () => (await primaryAttempts(event.breach_id)) >= attempts + 2,
      'two more attempts of the primary',
    );
    const slackCalls = slack.calls.filter((c) => c.path === '/services/T1/B1/fallback-1');
    expect(slackCalls).toHaveLength(1);
    const message = slackCalls[0]?.json as { text: string; blocks: unknown[] };
    expect(message.text).toContain(`Ticket #${event.ticket_id}`);
    // the message says why it came
    expect(message.blocks).toContainEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: FALLBACK_NOTE }],
    });
    const cards = teams.calls.filter((c) => c.path === '/workflows/fallback-1');
    expect(cards).toHaveLength(1);
    expect(cards[0]?.body).toContain(FALLBACK_NOTE);
    const [primary] = await rowsOf(event.breach_id);
    expect(primary).toMatchObject({ channel: 'webhook', fallback: false });
    expect(primary?.status).toMatch(/^(retrying|sending)$/);
    expect(primary?.last_error).toMatch(/500/);
  });

  it('a primary Slack that delivers cancels the fallback PagerDuty, which is never called', async () => {
    const event = await breachUnder({
      in_app: true,
      slack: [{ url: slack.urlOf('/services/T1/B1/primary-2') }],
      fallback: { after_minutes: 60, pagerduty: [{ routing_key: KEY_NEVER }] },
    });
    await deliver(event);
    expect(await statesOf(event.breach_id)).toEqual([
      ['in_app', false, 'delivered'],
      ['slack', false, 'delivered'],
      ['pagerduty', true, 'scheduled'],
    ]);
    // its retry horizon (24 h, scaled) counts from its deadline, not from the alert
    const horizon = await pool.query(
      `select extract(epoch from give_up_at - next_attempt_at)::float8 as s
         from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1 and fallback`,
      [event.breach_id],
    );
    expect(horizon.rows[0]?.s).toBeCloseTo(24 * 3600 * FALLBACK_SCALE, 3);
    // (acknowledged, answered or resolved before the deadline, it is cancelled at once:
    // fallback-cancel.test.ts)
    await passDeadline(event.breach_id);
    await eventually(async () => {
      const rows = await rowsOf(event.breach_id);
      return rows.find((r) => r.fallback)?.status === 'cancelled';
    }, 'the fallback cancelled at its deadline');
    const fallback = (await rowsOf(event.breach_id)).find((r) => r.fallback);
    expect(fallback).toMatchObject({
      channel: 'pagerduty',
      attempts: 0,
      last_error: 'cancelled: the primary channels delivered in time',
    });
    expect(
      pagerDuty.calls.filter((c) => (c.json as PagerDutyCall).routing_key === KEY_NEVER),
    ).toHaveLength(0);
    const primaryCalls = slack.calls.filter((c) => c.path === '/services/T1/B1/primary-2');
    expect(primaryCalls).toHaveLength(1);
    expect(primaryCalls[0]?.body).not.toContain(FALLBACK_NOTE);
  });

  it('a primary Slack still failing at the deadline fires the fallback PagerDuty: its own dedup_key, acknowledged and resolved apart from the primary page', async () => {
    const event = await breachUnder({
      in_app: false,
      email: ['oncall@fallback.test'],
      slack: [{ url: slackDown.urlOf('/services/T1/B1/down-3') }],
      pagerduty: [{ routing_key: KEY_PRIMARY_AND_FALLBACK }],
      fallback: { after_minutes: 60, pagerduty: [{ routing_key: KEY_PRIMARY_AND_FALLBACK }] },
    });
    await deliver(event);
    expect(await statesOf(event.breach_id)).toEqual([
      ['email', false, 'delivered'],
      ['pagerduty', false, 'delivered'],
      ['slack', false, 'retrying'],
      ['pagerduty', true, 'scheduled'],
    ]);
    await passDeadline(event.breach_id);
    await eventually(async () => {
      const rows = await rowsOf(event.breach_id);
      return rows.find((r) => r.fallback)?.status === 'delivered';
    }, 'the fallback page');

    const primaryKey = `stega-${event.ticket_id}-first_response-${now.getTime()}-breach`;
    const fallbackKey = `${primaryKey}-fallback`;
    const events = () =>
      pagerDuty.calls
        .map((c) => c.json as PagerDutyCall)
        .filter((e) => e.routing_key === KEY_PRIMARY_AND_FALLBACK);
    expect(events().map((e) => [e.event_action, e.dedup_key])).toEqual([
      ['trigger', primaryKey],
      ['trigger', fallbackKey],
    ]);
    for (const call of pagerDuty.calls) expect(pagerDutyEventErrors(call.json)).toEqual([]);
    const details = (e: PagerDutyCall) =>
      (e as unknown as { payload: { custom_details: Record<string, unknown> } }).payload
        .custom_details;
    const [primaryTrigger, fallbackTrigger] = events();
    expect(details(fallbackTrigger as PagerDutyCall).fallback).toBe(FALLBACK_NOTE);
    expect(details(primaryTrigger as PagerDutyCall).fallback).toBeUndefined();

    // an acknowledgement in Stega is mirrored to both pages, each under its own key
    expect(
      await pagerDutyAcknowledgeRecord(pool, {
        breachId: event.breach_id,
        by: 'Carla Dias',
        at: new Date(),
      }),
    ).toBe(2);
    retrier.wake();
    await pagerDuty.until(
      () => events().filter((e) => e.event_action === 'acknowledge').length === 2,
    );
    // the SLA is met late (the first reply): both pages are resolved
    await pool.query(
      `insert into stega.sla_outcomes (ticket_id, kind, started_at, due_at, stopped_at, met, decided_at)
       select ticket_id, kind, started_at, due_at, now(), false, due_at
         from stega.sla_clocks where ticket_id = $1 and kind = 'first_response'`,
      [event.ticket_id],
    );
    retrier.wake();
    await eventually(async () => {
      const { rows } = await pool.query(
        `select count(*)::int as n from stega.alert_deliveries
          where alert_type = 'breach' and alert_id = $1 and channel = 'pagerduty' and status = 'delivered'`,
        [event.breach_id],
      );
      return rows[0]?.n === 6;
    }, 'two triggers, two acknowledges and two resolves delivered');
    const byKey = (key: string) =>
      events()
        .filter((e) => e.dedup_key === key)
        .map((e) => e.event_action);
    expect(byKey(primaryKey)).toEqual(['trigger', 'acknowledge', 'resolve']);
    expect(byKey(fallbackKey)).toEqual(['trigger', 'acknowledge', 'resolve']);
  });
});
