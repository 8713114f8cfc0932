import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import {
  pagerDutyEventErrors,
  startPagerDutyReceiver,
  startSlackReceiver,
  startTeamsReceiver,
} from '../../../../test-support/service-receivers.js';
import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';
import { pagerDutyAcknowledgeRecord } from '../../src/db/pagerduty-events.js';
import { startDeliveryRetrier } from '../../src/delivery/retrier.js';
import type { AlertChannelsInput } from '../../src/domain/index.js';
import type { SlaBreachedEvent } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { agentInsert, calendarInsert24x7 } from '../support/fixtures.js';
import { mailScene } from '../support/mail-scene.js';
import { testDeliveries } from '../support/test-delivery.js';

const SCALE = 0.01; // retry delays of 1 s -> 10 ms
const KEY_A = 'A0123456789abcdefABCDEF01234aaaa';
const KEY_B = 'B0123456789abcdefABCDEF01234bbbb';

describe('Slack, Teams and PagerDuty deliveries through the alert ledger', async () => {
  const { pool, smtp, email } = await mailScene(6);
  const slack = await startSlackReceiver();
  const teams = await startTeamsReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  const logger = createLogger('silent', 'test');
  const deliveries = testDeliveries({
    pool,
    email,
    emailEndpoint: smtp.url,
    pagerDutyEventsUrl: pagerDuty.urlOf('/v2/enqueue'),
    acknowledgeUrl: ({ type, id }) => `https://help.example.test/ack/${type}-${id}`,
    timeScale: SCALE,
    logger,
  });
  const delivery = (name: string, allowed = [RECEIVER_NETWORKS]) =>
    deliveries(name, { webhookAllowedNetworks: allowed });
  const retriers: { stop(): Promise<void> }[] = [];
  const retrier = (name: string) => {
    const r = startDeliveryRetrier({
      pool,
      delivery: delivery(name),
      concurrency: 8,
      pollMs: 20,
      probeSeconds: 10 * SCALE,
      logger,
    });
    retriers.push(r);
    return r;
  };
  // each test starts the retriers it needs: one left running would claim the next test's rows
  afterEach(async () => {
    await Promise.all(retriers.splice(0).map((r) => r.stop()));
  });
  afterAll(async () => {
    await Promise.all([slack.stop(), teams.stop(), pagerDuty.stop()]);
  });

  const calendarId = await calendarInsert24x7(pool);
  const agentId = await agentInsert(pool, 'Carla Dias');
  const now = new Date();

  const breachUnderPolicyOf = breachUnderPolicy({
    db: pool,
    calendarId,
    agentId,
    now,
    label: 'chat',
  });

  async function breachUnder(channels: AlertChannelsInput): Promise<SlaBreachedEvent> {
    const event = await breachUnderPolicyOf(channels);
    // the dedup_key: ticket, SLA kind, due instant and what the alert is (not the row id)
    breachIds.set(
      event.breach_id,
      `stega-${event.ticket_id}-first_response-${now.getTime()}-breach`,
    );
    return event;
  }

  const rowsOf = async (alertId: number) =>
    (
      await pool.query(
        `select channel, recipient, status, attempts, last_error, secret
           from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1
          order by channel, recipient`,
        [alertId],
      )
    ).rows;
  const breachIds = new Map<number, string>();
  const dedupOf = (breachId: number) => breachIds.get(breachId) ?? 'unknown';
  const pagesOf = (breachId: number) =>
    pagerDuty.calls.filter(
      (c) => (c.json as { dedup_key?: string }).dedup_key === dedupOf(breachId),
    );
  /** The stop of a clock, as clockSave records it: the SLA met at `stoppedAt`. */
  const clockStopped = (ticketId: number, stoppedAt: Date) =>
    pool.query(
      `insert into stega.sla_outcomes (ticket_id, kind, started_at, due_at, stopped_at, met, decided_at)
       select ticket_id, kind, started_at, due_at, $2, $2 <= due_at, least($2, due_at)
         from stega.sla_clocks where ticket_id = $1 and kind = 'first_response'
       on conflict (ticket_id, kind, started_at) do update
          set stopped_at = excluded.stopped_at, met = excluded.met, decided_at = excluded.decided_at`,
      [ticketId, stoppedAt],
    );

  it('sends one Slack message, one Teams card and one PagerDuty trigger per alert, each once, with an acknowledge link', async () => {
    const event = await breachUnder({
      in_app: false,
      slack: [{ url: slack.urlOf('/services/T1/B1/x'), label: '#support' }],
      teams: [{ url: teams.urlOf('/workflows/abc') }],
      pagerduty: [{ routing_key: KEY_A }],
    });
    const alert = { type: 'breach' as const, payload: event };
    await delivery('host-1').deliver(alert, { batchId: 1n, eventId: 1n });
    // a redelivered event sends nothing again
    await delivery('host-2').deliver(alert, { batchId: 2n, eventId: 1n });
    const rows = await rowsOf(event.breach_id);
    expect(rows.map((r) => [r.channel, r.status, r.attempts])).toEqual([
      ['pagerduty', 'delivered', 1],
      ['slack', 'delivered', 1],
      ['teams', 'delivered', 1],
    ]);
    // the PagerDuty row names the action and a masked key; the key is the row's secret
    expect(rows[0]?.recipient).toMatch(/^trigger:…aaaa:[0-9a-f]{12}$/);
    expect(rows[0]?.secret).toBe(KEY_A);

    const slackCalls = slack.accepted.filter((c) => c.path === '/services/T1/B1/x');
    expect(slackCalls).toHaveLength(1);
    const blocks =
      (
        (slackCalls[0]?.json ?? { blocks: [] }) as {
          blocks: { type: string; elements?: { url: string }[] }[];
        }
      ).blocks ?? [];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'actions']);
    expect(blocks[2]?.elements?.map((b) => b.url)).toEqual([
      `https://help.example.test/tickets/${event.ticket_id}`,
      `https://help.example.test/ack/breach-${event.breach_id}`,
    ]);
    const cards = teams.accepted.filter((c) => c.path === '/workflows/abc');
    expect(cards).toHaveLength(1);
    expect(cards[0]?.json).toMatchObject({
      type: 'message',
      attachments: [
        { contentType: 'application/vnd.microsoft.card.adaptive', content: { version: '1.4' } },
      ],
    });
    const pages = pagesOf(event.breach_id);
    expect(pages).toHaveLength(1);
    expect(pages[0]?.path).toBe('/v2/enqueue');
    expect(pagerDutyEventErrors(pages[0]?.json)).toEqual([]);
    expect(pages[0]?.json).toMatchObject({
      event_action: 'trigger',
      routing_key: KEY_A,
      payload: { severity: 'critical' },
    });
  });

  it('PagerDuty: a 429 and a 503 are retried with the same dedup_key; a 400 is permanent after one call', async () => {
    const event = await breachUnder({
      in_app: false,
      pagerduty: [{ routing_key: KEY_A, breach_severity: 'error' }],
    });
    pagerDuty.script(
      { status: 429, body: '{"status":"throttle"}' },
      { status: 503, body: 'later' },
    );
    await delivery('host-1').deliver(
      { type: 'breach', payload: event },
      { batchId: 3n, eventId: 3n },
    );
    expect((await rowsOf(event.breach_id))[0]).toMatchObject({
      status: 'retrying',
      last_error: expect.stringMatching(/answered 429/),
    });
    retrier('retrier-1');
    await eventually(
      async () => (await rowsOf(event.breach_id))[0]?.status === 'delivered',
      'the trigger retried',
    );
    const pages = pagesOf(event.breach_id);
    expect(pages.map((c) => c.status)).toEqual([429, 503, 202]);
    // the same event each time: its key, action and routing key (the summary's "overdue by" is
    // worded at each send)
    const identity = (c: (typeof pages)[number]) => {
      const json = c.json as { dedup_key?: string; event_action?: string; routing_key?: string };
      return `${json.dedup_key}|${json.event_action}|${json.routing_key}`;
    };
    expect(new Set(pages.map(identity)).size).toBe(1);
    expect(identity(pages[0] as (typeof pages)[number])).toMatch(/^stega-.+\|trigger\|/);
    expect(pages[2]?.json).toMatchObject({ payload: { severity: 'error' } });

    const invalid = await breachUnder({ in_app: false, pagerduty: [{ routing_key: KEY_B }] });
    pagerDuty.script({
      status: 400,
      body: '{"status":"invalid event","message":"Event object is invalid"}',
    });
    await delivery('host-1').deliver(
      { type: 'breach', payload: invalid },
      { batchId: 4n, eventId: 4n },
    );
    const [row] = await rowsOf(invalid.breach_id);
    expect(row).toMatchObject({
      status: 'failed_permanent',
      attempts: 1,
      last_error: expect.stringMatching(/^permanent: PagerDuty .* answered 400 \(.*invalid event/),
    });
    expect(row?.last_error).not.toContain(KEY_B);
    expect(pagesOf(invalid.breach_id)).toHaveLength(1);
  });

  it('Slack: 410 channel_is_archived and 404 no_service are permanent; 429 is retried', async () => {
    const archived = await breachUnder({
      in_app: false,
      slack: [{ url: slack.urlOf('/archived') }],
    });
    slack.script({ status: 410, body: 'channel_is_archived' });
    await delivery('host-1').deliver(
      { type: 'breach', payload: archived },
      { batchId: 5n, eventId: 5n },
    );
    expect((await rowsOf(archived.breach_id))[0]).toMatchObject({
      status: 'failed_permanent',
      last_error: expect.stringMatching(
        /^permanent: Slack webhook .* answered 410 \(channel_is_archived\)/,
      ),
    });
    const gone = await breachUnder({ in_app: false, teams: [{ url: teams.urlOf('/gone') }] });
    teams.script({ status: 404, body: 'not found' });
    await delivery('host-1').deliver(
      { type: 'breach', payload: gone },
      { batchId: 6n, eventId: 6n },
    );
    expect((await rowsOf(gone.breach_id))[0]).toMatchObject({ status: 'failed_permanent' });

    const limited = await breachUnder({ in_app: false, slack: [{ url: slack.urlOf('/limited') }] });
    slack.script({ status: 429, body: 'rate_limited' });
    await delivery('host-1').deliver(
      { type: 'breach', payload: limited },
      { batchId: 7n, eventId: 7n },
    );
    expect((await rowsOf(limited.breach_id))[0]).toMatchObject({ status: 'retrying' });
    retrier('retrier-2');
    await eventually(
      async () => (await rowsOf(limited.breach_id))[0]?.status === 'delivered',
      'the Slack retry',
    );
    expect(slack.calls.filter((c) => c.path === '/limited').map((c) => c.status)).toEqual([
      429, 200,
    ]);
  });

  it('refuses a Slack or Teams URL on a private network unless WEBHOOK_ALLOWED_NETWORKS lists it', async () => {
    const event = await breachUnder({
      in_app: false,
      slack: [{ url: slack.urlOf('/private') }],
      teams: [{ url: teams.urlOf('/private') }],
    });
    await delivery('strict', []).deliver(
      { type: 'breach', payload: event },
      { batchId: 8n, eventId: 8n },
    );
    const rows = await rowsOf(event.breach_id);
    expect(rows.map((r) => r.status)).toEqual(['failed_permanent', 'failed_permanent']);
    for (const row of rows)
      expect(row.last_error).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
    expect(slack.calls.filter((c) => c.path === '/private')).toHaveLength(0);
  });

  it('PagerDuty: resolve is sent once when the SLA is met, with the trigger’s dedup_key, and only after the trigger arrived', async () => {
    retrier('retrier-3');
    const event = await breachUnder({
      in_app: false,
      pagerduty: [{ routing_key: KEY_A }, { routing_key: KEY_B }],
    });
    pagerDuty.down({ status: 503, body: 'down' });
    await delivery('host-1').deliver(
      { type: 'breach', payload: event },
      { batchId: 9n, eventId: 9n },
    );
    // the first reply goes out while PagerDuty is down: the resolves are recorded, they wait
    await clockStopped(event.ticket_id, new Date(now.getTime() + 60_000));
    const waiting = await rowsOf(event.breach_id);
    expect(waiting.map((r) => r.recipient.split(':')[0])).toEqual([
      'resolve',
      'resolve',
      'trigger',
      'trigger',
    ]);
    await eventually(
      async () =>
        (await rowsOf(event.breach_id)).some(
          (r) =>
            r.recipient.startsWith('resolve') && /waiting: the trigger/.test(r.last_error ?? ''),
        ),
      'a resolve waiting for its trigger',
    );
    expect(
      pagesOf(event.breach_id).filter(
        (c) => (c.json as { event_action: string }).event_action === 'resolve',
      ),
    ).toHaveLength(0);
    pagerDuty.up();
    await eventually(
      async () => (await rowsOf(event.breach_id)).every((r) => r.status === 'delivered'),
      'all delivered',
    );
    // the clock stops again (a recomputation), the ticket is resolved: nothing is sent twice
    await clockStopped(event.ticket_id, new Date(now.getTime() + 120_000));
    await pool.query("update stega.tickets set status = 'resolved' where id = $1", [
      event.ticket_id,
    ]);
    expect(await rowsOf(event.breach_id)).toHaveLength(4);
    const accepted = pagerDuty.accepted.filter(
      (c) => (c.json as { dedup_key: string }).dedup_key === dedupOf(event.breach_id),
    );
    for (const key of [KEY_A, KEY_B]) {
      const mine = accepted.filter((c) => (c.json as { routing_key: string }).routing_key === key);
      expect(mine.map((c) => (c.json as { event_action: string }).event_action)).toEqual([
        'trigger',
        'resolve',
      ]);
      expect(mine[1]?.json).toEqual({
        routing_key: key,
        event_action: 'resolve',
        dedup_key: dedupOf(event.breach_id),
      });
    }
  });

  it('PagerDuty: a resolved ticket resolves its alerts; a trigger that never arrived is not followed up', async () => {
    retrier('retrier-4');
    const event = await breachUnder({ in_app: false, pagerduty: [{ routing_key: KEY_A }] });
    await delivery('host-1').deliver(
      { type: 'breach', payload: event },
      { batchId: 10n, eventId: 10n },
    );
    await pool.query("update stega.tickets set status = 'resolved' where id = $1", [
      event.ticket_id,
    ]);
    await eventually(
      async () =>
        (await rowsOf(event.breach_id)).filter((r) => r.status === 'delivered').length === 2,
      'the resolve',
    );
    expect(
      pagesOf(event.breach_id).map((c) => (c.json as { event_action: string }).event_action),
    ).toEqual(['trigger', 'resolve']);

    const lost = await breachUnder({ in_app: false, pagerduty: [{ routing_key: KEY_B }] });
    pagerDuty.script({ status: 400, body: 'invalid event' });
    await delivery('host-1').deliver(
      { type: 'breach', payload: lost },
      { batchId: 11n, eventId: 11n },
    );
    await pool.query("update stega.tickets set status = 'resolved' where id = $1", [
      lost.ticket_id,
    ]);
    // the trigger failed for good: no resolve row is even recorded
    expect((await rowsOf(lost.breach_id)).map((r) => r.status)).toEqual(['failed_permanent']);
  });

  it('PagerDuty: an acknowledgement recorded in Stega is mirrored once, with the same dedup_key', async () => {
    retrier('retrier-5');
    const event = await breachUnder({ in_app: false, pagerduty: [{ routing_key: KEY_A }] });
    await delivery('host-1').deliver(
      { type: 'breach', payload: event },
      { batchId: 12n, eventId: 12n },
    );
    const ack = {
      breachId: event.breach_id,
      by: 'Carla Dias',
      at: new Date(),
    };
    expect(await pagerDutyAcknowledgeRecord(pool, ack)).toBe(1);
    expect(await pagerDutyAcknowledgeRecord(pool, ack)).toBe(0);
    await eventually(
      async () => (await rowsOf(event.breach_id)).every((r) => r.status === 'delivered'),
      'the acknowledge',
    );
    const pages = pagesOf(event.breach_id);
    expect(pages.map((c) => (c.json as { event_action: string }).event_action)).toEqual([
      'trigger',
      'acknowledge',
    ]);
    expect(pages[1]?.json).toEqual({
      routing_key: KEY_A,
      event_action: 'acknowledge',
      dedup_key: dedupOf(event.breach_id),
    });
    // once resolved, a late acknowledgement records nothing
    await pool.query("update stega.tickets set status = 'resolved' where id = $1", [
      event.ticket_id,
    ]);
    const other = await breachUnder({ in_app: false, pagerduty: [{ routing_key: KEY_A }] });
    await delivery('host-1').deliver(
      { type: 'breach', payload: other },
      { batchId: 13n, eventId: 13n },
    );
    await pool.query("update stega.tickets set status = 'resolved' where id = $1", [
      other.ticket_id,
    ]);
    expect(await pagerDutyAcknowledgeRecord(pool, { ...ack, breachId: other.breach_id })).toBe(0);
  });
});
