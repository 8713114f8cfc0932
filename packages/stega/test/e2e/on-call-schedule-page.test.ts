import { describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startPushService, type TestSubscription } from '../../../../test-support/push-service.js';
import { startTwilioReceiver } from '../../../../test-support/twilio-receiver.js';
import { type PagingNames, pagingBreach } from './paging-breach.js';
import { pushEnv, startPagingScene, twilioEnv } from './paging-scene.js';

const SID = `AC${'fedcba9876543210'.repeat(2)}`;
const TOKEN = 'twilio-auth-token-e2e-schedule-0123';
const FROM = '+15005550007';
/** Rule delays are scaled like retries: 2 min → 12 s, 5 min → 30 s. */
const SCALE = 0.1;
const HOUR = 3_600_000;

type Row = Record<string, unknown>;

const PAGING_NAMES: PagingNames = {
  escalation: 'night page',
  policy: 'night policy',
  org: 'Night',
  subject: 'Night breach',
  requesterEmail: 'req@night.test',
};

/**
 * The zone (Etc/GMT±N, no DST) where `at` is 03:mm, with its offset from UTC in hours. Zones
 * span UTC-12 to UTC+14, so every UTC hour has one.
 */
function zoneAtThree(at: Date): { zone: string; offset: number } {
  let offset = (3 - at.getUTCHours() + 24) % 24;
  if (offset > 14) offset -= 24;
  // POSIX-style names: Etc/GMT-5 is five hours ahead of UTC
  const zone = offset === 0 ? 'Etc/UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
  return { zone, offset };
}

/**
 * "A breach at 03:00" through the real processes: `stega start` (web server and an
 * sla-breach-worker), a real push service (web-push-testing, its own process) and Twilio's
 * API played by a local receiver. The escalation level targets "on call in schedule X"; the
 * schedule's zone is chosen so the instant the level fires is 03:mm there, and its daily
 * rotation hands off at 03:00, so that instant decides who is paged. That person's rules are
 * push at 0, SMS at 2 min, voice at 5 min; the SMS reply acknowledges and the call is never
 * made. In a gap of a schedule, its team's lead is paged and the activity says why.
 */
describe('end to end: a 03:00 breach pages whoever is on call, through their rules', async () => {
  const push = await startPushService();
  const twilio = await startTwilioReceiver({ accountSid: SID, authToken: TOKEN });
  const { pool, smtp, stega, stegaUrl, calendarId } = await startPagingScene(
    SCALE,
    {
      ...twilioEnv(twilio.url, { sid: SID, token: TOKEN, from: FROM }),
      ...pushEnv('mailto:oncall@night.test'),
    },
    [twilio, push],
  );
  const key = await stega.api<{ public_key: string }>('GET', '/api/web-push/key');

  async function agent(name: string) {
    const email = `${name.split(' ')[0]?.toLowerCase()}@night.test`;
    const created = await stega.api<{ id: number }>('POST', '/api/agents', { name, email });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.id, email, name };
  }

  /** Adds a contact method and confirms the code it was sent (`code` reads it). */
  async function verified(agentId: number, body: Row, code: () => Promise<string>) {
    const added = await stega.api<{ id: number; verified: boolean }>(
      'POST',
      `/api/agents/${agentId}/contact-methods`,
      body,
    );
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.verified).toBe(false);
    const confirmed = await stega.api<{ verified: boolean }>(
      'POST',
      `/api/agents/${agentId}/contact-methods/${added.body.id}/verify`,
      { code: await code() },
    );
    expect(confirmed.body.verified, JSON.stringify(confirmed.body)).toBe(true);
  }

  /** Verifies a number for SMS and for voice (the code texted, then read out in a call). */
  async function phone(agentId: number, number: string) {
    for (const method of ['sms', 'voice'] as const) {
      const sent = twilio.created.length;
      await verified(agentId, { method, address: number }, async () => {
        const message = twilio.created.slice(sent).find((r) => r.to === number);
        return (message?.body.match(/\d/g) ?? []).join('').slice(-6);
      });
    }
  }

  /** Registers a browser subscription and confirms the test push's code. */
  async function browser(agentId: number): Promise<TestSubscription> {
    const subscription = await push.subscribe(key.body.public_key);
    await verified(
      agentId,
      {
        method: 'push',
        subscription: {
          endpoint: subscription.endpoint,
          keys: subscription.keys,
          expirationTime: null,
        },
        label: 'phone browser',
      },
      async () => {
        const [test] = (await push.messages(subscription)).map((m) => JSON.parse(m) as Row);
        return String(test?.code);
      },
    );
    return subscription;
  }

  async function rules(agentId: number, high: { method: string; delay_minutes: number }[]) {
    const set = await stega.api('PUT', `/api/agents/${agentId}/notification-rules`, { high });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  }

  const ana = await agent('Ana Night');
  const bo = await agent('Bo Day');
  const lead = await agent('Luis Lead');
  const anaPhone = '+14155550201';
  const anaBrowser = await browser(ana.id);
  await phone(ana.id, anaPhone);
  await rules(ana.id, [
    { method: 'push', delay_minutes: 0 },
    { method: 'sms', delay_minutes: 2 },
    { method: 'voice', delay_minutes: 5 },
  ]);
  await rules(bo.id, [{ method: 'email', delay_minutes: 0 }]);
  await rules(lead.id, [{ method: 'email', delay_minutes: 0 }]);
  const team = await stega.api<{ id: number }>('POST', '/api/teams', {
    name: 'Night ops',
    member_ids: [ana.id, bo.id, lead.id],
    lead_agent_id: lead.id,
  });
  expect(team.status, JSON.stringify(team.body)).toBe(201);

  /** The instant the level fires: past the ticket's 5-minute target, 03:mm in `zone`. */
  const at = new Date(Date.now() + 8 * 60_000);
  const { zone, offset } = zoneAtThree(at);
  const localDate = (days: number) =>
    new Date(at.getTime() + offset * HOUR + days * 24 * HOUR).toISOString().slice(0, 10);

  async function schedule(name: string, layer: Row) {
    const created = await stega.api<{ id: number }>('POST', '/api/schedules', {
      name,
      time_zone: zone,
      team_id: team.body.id,
      layers: [layer],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id;
  }

  /** The breach of a ticket whose level 0 targets whoever is on call in `scheduleId`. */
  const page = (tag: string, scheduleId: number) =>
    pagingBreach(
      stega,
      pool,
      calendarId,
      PAGING_NAMES,
      tag,
      { on_call: [{ schedule_id: scheduleId }] },
      at,
    );

  const stepRows = async (ticketId: number) =>
    (
      await pool.query(
        `select id, page_agent_id, channel, page_step, status, created_at
           from stega.alert_deliveries
          where ticket_id = $1 and page_agent_id is not null order by page_step, id`,
        [ticketId],
      )
    ).rows as Row[];
  const onCallActivity = async (ticketId: number) =>
    (
      await pool.query(
        `select action, details from stega.ticket_activity
          where ticket_id = $1 and action like 'escalation_on_call%' order by id`,
        [ticketId],
      )
    ).rows as { action: string; details: Row }[];

  it('push at +0, SMS at +2 min, the SMS reply ACK acknowledges, no call is made, the chain stops', async () => {
    // Bo had the day that ended at 03:00 local; Ana's began then
    const nights = await schedule('Nights', {
      participant_ids: [bo.id, ana.id],
      shift_length: 1,
      shift_unit: 'days',
      handoff_time: '03:00',
      start_date: localDate(-1),
    });
    const onCall = await stega.api<{ agent: { id: number } | null }>(
      'GET',
      `/api/schedules/${nights}/on-call?at=${encodeURIComponent(at.toISOString())}`,
    );
    expect(onCall.body.agent?.id, JSON.stringify(onCall.body)).toBe(ana.id);
    const callsBefore = twilio.voiceCalls().filter((c) => c.to === anaPhone).length;

    const { ticketId, escalationId } = await page('ana', nights);

    // the push at +0: at the push service, decryptable, naming the ticket
    const pushed = await eventually(
      async () =>
        (await push.messages(anaBrowser))
          .map((m) => JSON.parse(m) as Row)
          .find((m) => m.type === 'page' && m.ticket_id === ticketId),
      'the page at the push service',
      PROCESS_PATIENCE,
    );
    expect(String(pushed.title)).toContain(`Ticket #${ticketId}`);
    // the SMS at +2 min (scaled), not before
    const sms = await eventually(
      async () => twilio.messages().find((m) => m.to === anaPhone && /Reply ACK/.test(m.body)),
      'the SMS step',
      PROCESS_PATIENCE,
    );
    const rows = await stepRows(ticketId);
    expect(rows.map((r) => [r.page_agent_id, r.channel, r.page_step])).toEqual([
      [ana.id, 'push', 0],
      [ana.id, 'sms', 1],
      [ana.id, 'voice', 2],
    ]);
    const [pushRow, smsRow] = rows as [Row, Row, Row];
    const paged = (pushRow.created_at as Date).getTime();
    expect(sms.at).toBeGreaterThanOrEqual(paged + 2 * 60_000 * SCALE - 50);

    const code = /Reply ACK (\d+)/.exec(sms.body)?.[1];
    expect(code).toMatch(/^\d{6}$/);
    const answer = await twilio.reply(`${stegaUrl}/api/twilio/sms`, anaPhone, FROM, `ACK ${code}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(`Acknowledged ticket #${ticketId}`);

    // the acknowledgement is recorded and the chain shown stopped ...
    const chain = (
      await pool.query(
        `select stop_reason, acknowledged_via, acknowledged_by_agent_id, next_at
           from stega.escalations where id = $1`,
        [escalationId],
      )
    ).rows[0];
    expect(chain).toEqual({
      stop_reason: 'acknowledged',
      acknowledged_via: 'sms',
      acknowledged_by_agent_id: ana.id,
      next_at: null,
    });
    // ... so the voice step is cancelled (never claimable) and no call was made
    const after = await stepRows(ticketId);
    expect(after.map((r) => r.status)).toEqual(['delivered', expect.any(String), 'cancelled']);
    expect(twilio.voiceCalls().filter((c) => c.to === anaPhone).length).toBe(callsBefore);
    // Bo, whose day ended at the handoff, was not paged
    expect(after.every((r) => r.page_agent_id === ana.id)).toBe(true);

    // the activity names the person on call and the schedule, and who acknowledged how
    expect(await onCallActivity(ticketId)).toEqual([
      {
        action: 'escalation_on_call',
        details: expect.objectContaining({
          schedule_id: nights,
          schedule_name: 'Nights',
          agent_id: ana.id,
          agent_name: ana.name,
          via: 'schedule',
          reason: null,
          source: 'layer',
        }),
      },
    ]);
    const acknowledged = await pool.query(
      `select details from stega.ticket_activity
        where ticket_id = $1 and action = 'escalation_acknowledged'`,
      [ticketId],
    );
    expect(acknowledged.rows[0]?.details).toMatchObject({
      via: 'sms',
      acknowledged_by_agent_id: ana.id,
    });
  });

  it('a gap in the schedule at 03:00 pages its team’s lead, and the activity says why', async () => {
    // Ana covers only 12:00-13:00 local: 03:00 is a gap
    const middays = await schedule('Middays', {
      participant_ids: [ana.id],
      shift_length: 1,
      shift_unit: 'weeks',
      handoff_time: '00:00',
      start_date: localDate(-7),
      restrictions: [
        {
          days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
          start: '12:00',
          end: '13:00',
        },
      ],
    });
    const { ticketId } = await page('gap', middays);
    await eventually(
      async () => smtp.messages.some((m) => m.to.includes(lead.email)),
      'the lead’s email',
      PROCESS_PATIENCE,
    );
    const rows = await stepRows(ticketId);
    expect(rows.map((r) => [r.page_agent_id, r.channel])).toEqual([[lead.id, 'email']]);
    expect(await onCallActivity(ticketId)).toEqual([
      {
        action: 'escalation_on_call_fallback',
        details: expect.objectContaining({
          schedule_id: middays,
          schedule_name: 'Middays',
          agent_id: lead.id,
          agent_name: lead.name,
          via: 'schedule_team_lead',
          reason: 'gap',
        }),
      },
    ]);
  });
});
