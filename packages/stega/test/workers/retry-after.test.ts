import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import {
  type ServiceCall,
  startAnyReceiver,
  startPagerDutyReceiver,
  startSlackReceiver,
  startTeamsReceiver,
} from '../../../../test-support/service-receivers.js';
import { startDeliveryRetrier } from '../../src/delivery/retrier.js';
import type { SlaBreachedEvent } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { agentInsert, calendarInsert24x7 } from '../support/fixtures.js';
import { mailScene } from '../support/mail-scene.js';
import { testDeliveries } from '../support/test-delivery.js';

/**
 * A receiver's Retry-After on 429 and 503, against real HTTP receivers: the next attempt is
 * not before the instant it names (checked on the receivers' own timestamps and the ledger's
 * recorded times, never by sleeping), the reason is recorded, the endpoint's circuit waits
 * for that instant, and a malformed or absurd Retry-After falls back to the schedule or the cap.
 */

const SCALE = 0.01; // the retry schedule compressed: 1 s -> 10 ms; the horizon 24 h -> 864 s
const ROUTING_KEY = 'R0123456789abcdefABCDEF01234rrrr';

describe('Retry-After on 429 and 503', async () => {
  const { pool, smtp, email } = await mailScene(6);
  const slack = await startSlackReceiver();
  const teams = await startTeamsReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  const hooks = await startAnyReceiver();
  const oddHooks = await startAnyReceiver();
  const logger = createLogger('silent', 'test');
  const deliveries = testDeliveries({
    pool,
    email,
    emailEndpoint: smtp.url,
    pagerDutyEventsUrl: pagerDuty.urlOf('/v2/enqueue'),
    timeScale: SCALE,
    logger,
  });
  const delivery = (name: string, timeScale = SCALE) => deliveries(name, { timeScale });
  const retriers: { stop(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(retriers.map((r) => r.stop()));
    await Promise.all([
      slack.stop(),
      teams.stop(),
      pagerDuty.stop(),
      hooks.stop(),
      oddHooks.stop(),
    ]);
  });

  const calendarId = await calendarInsert24x7(pool);
  const agentId = await agentInsert(pool, 'Carla Dias');
  const now = new Date();
  let events = 0;

  /** A ticket under a policy with `channels`, and one breach of it as its event payload. */
  const breachUnder = breachUnderPolicy({
    db: pool,
    calendarId,
    agentId,
    now,
    label: 'retry-after',
  });

  const deliver = (event: SlaBreachedEvent, timeScale = SCALE) => {
    events += 1;
    return delivery('host-1', timeScale).deliver(
      { type: 'breach', payload: event },
      { batchId: BigInt(events), eventId: BigInt(events) },
    );
  };

  /** The breach's delivery rows, with the wait the last outcome chose (recorded in one statement). */
  const rowsOf = async (breachId: number) =>
    (
      await pool.query(
        `select channel, status, attempts, last_error, next_attempt_at, give_up_at, endpoint,
                extract(epoch from next_attempt_at - updated_at)::float8 as wait_seconds
           from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1
          order by channel`,
        [breachId],
      )
    ).rows;
  const endpointOf = async (endpoint: string) =>
    (
      await pool.query(
        `select state, consecutive_failures, probe_at, last_error,
                extract(epoch from probe_at - updated_at)::float8 as hold_seconds
           from stega.delivery_endpoints where endpoint = $1`,
        [endpoint],
      )
    ).rows[0];
  /** A retry loop (stopped after the file); the rows are read before one runs. */
  const startRetrier = () => {
    const retrier = startDeliveryRetrier({
      pool,
      delivery: delivery('retrier'),
      concurrency: 8,
      pollMs: 20,
      probeSeconds: 10 * SCALE,
      logger,
    });
    retriers.push(retrier);
    return retrier;
  };
  const callsTo = (receiver: { calls: ServiceCall[] }, path: string) =>
    receiver.calls.filter((c) => c.path === path);
  const delivered = (breachId: number, what: string) =>
    eventually(async () => {
      const rows = await rowsOf(breachId);
      return rows.length > 0 && rows.every((r) => r.status === 'delivered') && rows;
    }, what);

  it('a malformed Retry-After (words, negative) leaves the schedule, and counts as a failure as before', async () => {
    for (const [path, header] of [
      ['/soon', 'soon'],
      ['/negative', '-5'],
    ] as const) {
      const event = await breachUnder({ in_app: false, webhooks: [{ url: oddHooks.urlOf(path) }] });
      oddHooks.script({ status: 429, body: 'slow down', headers: { 'retry-after': header } });
      await deliver(event);
      const [row] = await rowsOf(event.breach_id);
      expect(row).toMatchObject({ status: 'retrying', attempts: 1 });
      expect(row?.last_error).toContain(
        `rate limited by the receiver (429; its Retry-After ${JSON.stringify(header)} is neither seconds nor an HTTP date: the retry schedule applies): webhook`,
      );
      // the schedule's first delay (1 s scaled, ±10 % jitter)
      expect(row?.wait_seconds).toBeGreaterThanOrEqual(0.009 - 0.0005);
      expect(row?.wait_seconds).toBeLessThanOrEqual(0.011 + 0.0005);
      expect(await endpointOf(oddHooks.urlOf(path))).toMatchObject({
        state: 'closed',
        consecutive_failures: 1,
      });
    }
  });

  it('an absurd Retry-After (10 days) is followed for one hour at most, and never past the horizon', async () => {
    // real time (scale 1): the horizon is 24 h, so the cap decides
    const tenDays = await breachUnder({
      in_app: false,
      slack: [{ url: slack.urlOf('/ten-days') }],
    });
    slack.script({ status: 429, body: 'rate_limited', headers: { 'retry-after': '864000' } });
    await deliver(tenDays, 1);
    const [row] = await rowsOf(tenDays.breach_id);
    expect(row).toMatchObject({ status: 'retrying', attempts: 1 });
    expect(row?.last_error).toMatch(
      /^rate limited by the receiver \(429\), retrying at \S+ \(its Retry-After asked for 10 days; at most 1 h is followed\): Slack webhook .* answered 429 \(rate_limited\)$/,
    );
    expect(row?.wait_seconds).toBeGreaterThan(3590);
    expect(row?.wait_seconds).toBeLessThanOrEqual(3600);
    const held = await endpointOf(slack.urlOf('/ten-days'));
    expect(held).toMatchObject({ state: 'open', consecutive_failures: 0 });
    expect(held?.hold_seconds).toBeGreaterThan(3590);
    expect(held?.hold_seconds).toBeLessThanOrEqual(3600);

    // compressed (the horizon 864 s): 3000 s would pass it, so the last try is at the horizon
    const late = await breachUnder({ in_app: false, slack: [{ url: slack.urlOf('/late') }] });
    slack.script({ status: 429, body: 'rate_limited', headers: { 'retry-after': '3000' } });
    await deliver(late);
    const [lateRow] = await rowsOf(late.breach_id);
    expect(lateRow).toMatchObject({ status: 'retrying' });
    expect(lateRow?.last_error).toContain('(the last attempt, at the end of the retry horizon)');
    const margin = Math.abs(lateRow?.next_attempt_at.getTime() - lateRow?.give_up_at.getTime());
    expect(margin).toBeLessThan(1000);
  });

  it('Slack 429 with Retry-After: 2: the next try is not before the instant, the circuit waits for it, each alert arrives once', async () => {
    const path = '/services/T1/B1/limited';
    const first = await breachUnder({ in_app: false, slack: [{ url: slack.urlOf(path) }] });
    slack.script({ status: 429, body: 'rate_limited', headers: { 'retry-after': '2' } });
    await deliver(first);
    const [limited] = callsTo(slack, path);
    if (!limited) throw new Error('no call reached the receiver');
    const instant = limited.at + 2000;
    const [row] = await rowsOf(first.breach_id);
    expect(row).toMatchObject({ status: 'retrying', attempts: 1 });
    const said =
      /^rate limited by the receiver \(429\), retrying at (\S+): Slack webhook .* answered 429 \(rate_limited\)$/.exec(
        row?.last_error,
      );
    expect(said, row?.last_error).not.toBeNull();
    expect(new Date(said?.[1] ?? 0).getTime()).toBeGreaterThanOrEqual(instant);
    expect(row?.next_attempt_at.getTime()).toBeGreaterThanOrEqual(instant);
    // the endpoint answered: held open until the instant, not counted as a failure
    const held = await endpointOf(slack.urlOf(path));
    expect(held).toMatchObject({ state: 'open', consecutive_failures: 0 });
    expect(held?.probe_at.getTime()).toBeGreaterThanOrEqual(instant);

    // another alert to the same webhook meanwhile waits for the instant too, without a call
    const second = await breachUnder({ in_app: false, slack: [{ url: slack.urlOf(path) }] });
    await deliver(second);
    expect(callsTo(slack, path)).toHaveLength(1);
    const [waiting] = await rowsOf(second.breach_id);
    expect(waiting).toMatchObject({ status: 'retrying', attempts: 0 });
    expect(waiting?.last_error).toMatch(
      /^waiting: the endpoint's circuit is open \(rate limited by the receiver \(429\), retrying at /,
    );

    const retrier = startRetrier();
    await delivered(first.breach_id, 'the first alert after the Retry-After');
    await delivered(second.breach_id, 'the second alert after the Retry-After');
    const calls = callsTo(slack, path);
    expect(calls.map((c) => c.status)).toEqual([429, 200, 200]);
    for (const call of calls.slice(1)) expect(call.at).toBeGreaterThanOrEqual(instant);
    // one message per alert
    const tickets = calls
      .slice(1)
      .map((c) => /tickets\/(\d+)/.exec(c.body)?.[1])
      .sort();
    expect(tickets).toEqual([String(first.ticket_id), String(second.ticket_id)].sort());
    expect((await rowsOf(first.breach_id))[0]).toMatchObject({ attempts: 2, last_error: null });
    expect(await endpointOf(slack.urlOf(path))).toMatchObject({ state: 'closed' });
    await retrier.stop();
  });

  it('Teams (an HTTP-date), a webhook (503) and PagerDuty: each next try is not before the instant named', async () => {
    // an HTTP-date has whole seconds: at least 2 s ahead
    const until = Math.ceil(Date.now() / 1000) * 1000 + 2000;
    const httpDate = new Date(until).toUTCString();
    teams.script({ status: 429, body: 'Too Many Requests', headers: { 'retry-after': httpDate } });
    hooks.script({ status: 503, body: 'maintenance', headers: { 'retry-after': '2' } });
    pagerDuty.script({
      status: 429,
      body: '{"status":"throttle"}',
      headers: { 'retry-after': '2' },
    });
    const event = await breachUnder({
      in_app: false,
      teams: [{ url: teams.urlOf('/workflows/limited') }],
      webhooks: [{ url: hooks.urlOf('/maintenance') }],
      pagerduty: [{ routing_key: ROUTING_KEY }],
    });
    await deliver(event);
    const rows = await rowsOf(event.breach_id);
    const byChannel = new Map(rows.map((r) => [r.channel, r]));
    expect(byChannel.get('webhook')?.last_error).toMatch(
      /^the receiver is unavailable \(503\), retrying at \S+: webhook .* answered 503 \(maintenance\)$/,
    );
    const pages = callsTo(pagerDuty, '/v2/enqueue');
    const hookCalls = callsTo(hooks, '/maintenance');
    expect(byChannel.get('teams')?.next_attempt_at.getTime()).toBeGreaterThanOrEqual(until);
    const teamsHeld = await endpointOf(teams.urlOf('/workflows/limited'));
    expect(teamsHeld).toMatchObject({ state: 'open', consecutive_failures: 0 });
    expect(teamsHeld?.probe_at.getTime()).toBeGreaterThanOrEqual(until);
    expect(await endpointOf(hooks.urlOf('/maintenance'))).toMatchObject({ state: 'open' });
    // PagerDuty throttles per routing key and one circuit serves every key: only the row waits
    expect(await endpointOf(pagerDuty.urlOf('/v2/enqueue'))).toBeUndefined();

    startRetrier();
    const done = await delivered(event.breach_id, 'every channel after its Retry-After');
    expect(done.map((r) => [r.channel, r.attempts])).toEqual([
      ['pagerduty', 2],
      ['teams', 2],
      ['webhook', 2],
    ]);
    const teamsCalls = callsTo(teams, '/workflows/limited');
    expect(teamsCalls.map((c) => c.status)).toEqual([429, 202]);
    expect(teamsCalls[1]?.at).toBeGreaterThanOrEqual(until);
    const hookAll = callsTo(hooks, '/maintenance');
    expect(hookAll.map((c) => c.status)).toEqual([503, 204]);
    expect(hookAll[1]?.at).toBeGreaterThanOrEqual((hookCalls[0]?.at ?? 0) + 2000);
    const pageAll = callsTo(pagerDuty, '/v2/enqueue');
    expect(pageAll.map((c) => c.status)).toEqual([429, 202]);
    expect(pageAll[1]?.at).toBeGreaterThanOrEqual((pages[0]?.at ?? 0) + 2000);
  });
});
