import { describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startSlackApiReceiver } from '../../../../test-support/slack-api-receiver.js';
import { startTwilioReceiver } from '../../../../test-support/twilio-receiver.js';
import { type PagingNames, pagingBreach } from './paging-breach.js';
import { startPagingScene, twilioEnv } from './paging-scene.js';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const TOKEN = 'twilio-auth-token-e2e-0123456789';
const FROM = '+15005550006';
/** Rule delays are scaled like retries: 2 min → 12 s, 5 min → 30 s. */
const SCALE = 0.1;
const SLACK_BOT = 'xoxb-e2e-bot-token';
const SLACK_SECRET = 'slack-signing-secret-e2e-0123456789';

type Row = Record<string, unknown>;

const PAGING_NAMES: PagingNames = {
  escalation: 'page',
  policy: 'policy',
  org: 'Org',
  subject: 'Paging',
  requesterEmail: 'req@oncall.test',
};

/**
 * Personal notification rules through the real processes: `stega start` (web server and an
 * sla-breach-worker) with Twilio's API played by a local receiver that signs its callbacks;
 * people, their verified numbers and their rules set through the API; an escalation level
 * paging them fired by the breach job's function.
 */
describe('end to end: a paged person is reached through their notification rules', async () => {
  const twilio = await startTwilioReceiver({ accountSid: SID, authToken: TOKEN });
  const slack = await startSlackApiReceiver({ botToken: SLACK_BOT, signingSecret: SLACK_SECRET });
  const { pool, smtp, stega, stegaUrl, calendarId } = await startPagingScene(
    SCALE,
    {
      ...twilioEnv(twilio.url, { sid: SID, token: TOKEN, from: FROM }),
      SLACK_BOT_TOKEN: SLACK_BOT,
      SLACK_SIGNING_SECRET: SLACK_SECRET,
      SLACK_API_URL: slack.url,
    },
    [twilio, slack],
  );

  async function person(name: string, phone: string, verify: { sms: boolean; voice: boolean }) {
    const email = `${name.toLowerCase()}@oncall.test`;
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', { name, email });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const id = agent.body.id;
    for (const method of ['sms', 'voice'] as const) {
      const sent = twilio.created.length;
      const added = await stega.api<{ id: number; verified: boolean }>(
        'POST',
        `/api/agents/${id}/contact-methods`,
        { method, address: phone },
      );
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      expect(added.body.verified).toBe(false);
      // the code went out (as a text, or read out in a call) before the answer
      const codeMessage = twilio.created.slice(sent).find((r) => r.to === phone);
      const code = (codeMessage?.body.match(/\d/g) ?? []).join('').slice(-6);
      expect(code).toMatch(/^\d{6}$/);
      if (verify[method]) {
        const wrong = await stega.api(
          'POST',
          `/api/agents/${id}/contact-methods/${added.body.id}/verify`,
          {
            code: code === '000000' ? '111111' : '000000',
          },
        );
        expect(wrong.status).toBe(400);
        const verified = await stega.api<{ verified: boolean }>(
          'POST',
          `/api/agents/${id}/contact-methods/${added.body.id}/verify`,
          { code },
        );
        expect(verified.body.verified).toBe(true);
      }
    }
    return { id, email, phone };
  }

  async function rules(agentId: number, high: { method: string; delay_minutes: number }[]) {
    const set = await stega.api('PUT', `/api/agents/${agentId}/notification-rules`, { high });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  }

  /** A breach whose escalation level 0 pages `agentIds`; returns the ticket and its chain. */
  const page = (tag: string, agentIds: number[]) =>
    pagingBreach(stega, pool, calendarId, PAGING_NAMES, tag, agentIds);

  const stepRows = async (agentId: number) =>
    (
      await pool.query(
        `select id, channel, page_step, status, created_at, next_attempt_at, last_attempt_at,
                delivered_at
           from stega.alert_deliveries where page_agent_id = $1 order by page_step, id`,
        [agentId],
      )
    ).rows as Row[];

  it('email at 0, SMS at 2 min, voice at 5 min: the SMS reply ACK acknowledges, no call is made, the chain stops', async () => {
    const ana = await person('Ana', '+14155550101', { sms: true, voice: true });
    await rules(ana.id, [
      { method: 'email', delay_minutes: 0 },
      { method: 'sms', delay_minutes: 2 },
      { method: 'voice', delay_minutes: 5 },
    ]);
    const callsBefore = twilio.voiceCalls().length;
    const { ticketId, escalationId } = await page('ana', [ana.id]);

    const sms = await eventually(
      async () => twilio.messages().find((m) => m.to === ana.phone && /Reply ACK/.test(m.body)),
      'the SMS step',
      PROCESS_PATIENCE,
    );
    const rows = await stepRows(ana.id);
    expect(rows.map((r) => [r.channel, r.page_step])).toEqual([
      ['email', 0],
      ['sms', 1],
      ['voice', 2],
    ]);
    const [emailRow, smsRow, voiceRow] = rows as [Row, Row, Row];
    expect(emailRow.status).toBe('delivered');
    expect(smtp.messages.some((m) => m.to.includes(ana.email))).toBe(true);
    // the SMS was not sent before its step's instant: paged + 2 min (scaled)
    const paged = (emailRow.created_at as Date).getTime();
    expect(sms.at).toBeGreaterThanOrEqual(paged + 2 * 60_000 * SCALE - 50);
    expect(voiceRow.status).toBe('scheduled');

    const code = /Reply ACK (\d+)/.exec(sms.body)?.[1];
    // the code is keyed on the page, not its id (which counts up): the id acknowledges nothing
    expect(code).toMatch(/^\d{6}$/);
    const byId = await twilio.reply(
      `${stegaUrl}/api/twilio/sms`,
      ana.phone,
      FROM,
      `ack ${smsRow.id}`,
    );
    expect(byId.text).toContain('Not acknowledged');
    const answer = await twilio.reply(`${stegaUrl}/api/twilio/sms`, ana.phone, FROM, `ack ${code}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(`Acknowledged ticket #${ticketId}`);

    const chain = (
      await pool.query(
        'select stop_reason, acknowledged_via, acknowledged_by_agent_id from stega.escalations where id = $1',
        [escalationId],
      )
    ).rows[0];
    expect(chain).toEqual({
      stop_reason: 'acknowledged',
      acknowledged_via: 'sms',
      acknowledged_by_agent_id: ana.id,
    });
    // the voice step was cancelled with the acknowledgement: it can never be claimed
    const voice = (await stepRows(ana.id))[2];
    expect(voice?.status).toBe('cancelled');
    expect(twilio.voiceCalls().length).toBe(callsBefore);
    const activity = await pool.query(
      `select details from stega.ticket_activity where ticket_id = $1 and action = 'escalation_acknowledged'`,
      [ticketId],
    );
    expect(activity.rows[0]?.details).toMatchObject({
      via: 'sms',
      acknowledged_by_agent_id: ana.id,
    });

    // Twilio's receipts of the SMS, as it reported them, in the person's log
    await twilio.until(
      () => twilio.callbacks.filter((c) => c.params.MessageSid === sms.sid).length === 3,
    );
    const log = await stega.api<{
      items: { delivery_id: number; method: string; receipts: { status: string }[] }[];
    }>('GET', `/api/agents/${ana.id}/notification-log`);
    const smsLog = log.body.items.find((i) => i.delivery_id === Number(smsRow.id));
    expect(smsLog?.method).toBe('sms');
    expect(smsLog?.receipts.map((r) => r.status)).toEqual(['queued', 'sent', 'delivered']);
  });

  it('an SMS reply ACK of a person deactivated since the page acknowledges nothing', async () => {
    // before: the reply acknowledged the alert as the deactivated agent
    const cleo = await person('Cleo', '+14155550177', { sms: true, voice: false });
    await rules(cleo.id, [{ method: 'sms', delay_minutes: 0 }]);
    const { escalationId } = await page('cleo', [cleo.id]);
    const sms = await eventually(
      async () => twilio.messages().find((m) => m.to === cleo.phone && /Reply ACK/.test(m.body)),
      'the SMS step',
      PROCESS_PATIENCE,
    );
    const deactivated = await stega.api('POST', `/api/agents/${cleo.id}/deactivate`);
    expect(deactivated.status, JSON.stringify(deactivated.body)).toBe(200);
    const code = /Reply ACK (\d+)/.exec(sms.body)?.[1];
    const answer = await twilio.reply(
      `${stegaUrl}/api/twilio/sms`,
      cleo.phone,
      FROM,
      `ack ${code}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('Not acknowledged: you have been deactivated');
    const chain = await pool.query('select acknowledged_via from stega.escalations where id = $1', [
      escalationId,
    ]);
    expect(chain.rows[0]?.acknowledged_via).toBeNull();
  });

  it('Twilio down: the SMS step is retried, then the next step (email) goes without waiting for its delay', async () => {
    const bo = await person('Bo', '+14155550102', { sms: true, voice: false });
    await rules(bo.id, [
      { method: 'sms', delay_minutes: 0 },
      { method: 'email', delay_minutes: 5 },
    ]);
    const refusedBefore = twilio.calls.filter((c) => c.status === 503).length;
    twilio.down(503);
    try {
      await page('bo', [bo.id]);
      const rows = await eventually(
        async () => {
          const found = await stepRows(bo.id);
          return found[1]?.status === 'delivered' ? found : undefined;
        },
        'the email step',
        PROCESS_PATIENCE,
      );
      const [smsRow, emailRow] = rows as [Row, Row];
      expect(smsRow.status).toBe('failed_permanent');
      expect(twilio.calls.filter((c) => c.status === 503).length - refusedBefore).toBeGreaterThan(
        1,
      );
      // pulled forward: claimed before the instant its delay named (paged + 5 min, scaled)
      const scheduledFor = (emailRow.created_at as Date).getTime() + 5 * 60_000 * SCALE;
      expect((emailRow.delivered_at as Date).getTime()).toBeLessThan(scheduledFor);
      expect(smtp.messages.some((m) => m.to.includes(bo.email))).toBe(true);
    } finally {
      twilio.up();
    }
  });

  it('an unverified number is never texted; forged and replayed callbacks change nothing', async () => {
    const cy = await person('Cy', '+14155550103', { sms: false, voice: false });
    await rules(cy.id, [
      { method: 'sms', delay_minutes: 0 },
      { method: 'email', delay_minutes: 0 },
    ]);
    const texts = twilio.messages().filter((m) => m.to === cy.phone).length;
    const { escalationId } = await page('cy', [cy.id]);
    await eventually(
      async () => (await stepRows(cy.id)).some((r) => r.status === 'delivered'),
      'the email step',
      PROCESS_PATIENCE,
    );
    // the email step was recorded with the page, in the statement an SMS step would have been
    expect((await stepRows(cy.id)).map((r) => r.channel)).toEqual(['email']);
    expect(twilio.messages().filter((m) => m.to === cy.phone).length).toBe(texts);

    // a forged ACK (wrong signature) and an ACK from a number nobody verified: nothing happens
    const anyPage = await pool.query(
      "select id from stega.alert_deliveries where channel = 'sms' and page_agent_id is not null limit 1",
    );
    const forged = await twilio.post(
      `${stegaUrl}/api/twilio/sms`,
      { From: cy.phone, To: FROM, Body: `ACK ${anyPage.rows[0]?.id}` },
      'bm90LXRoZS1zaWduYXR1cmU=',
    );
    expect(forged.status).toBe(403);
    const stranger = await twilio.reply(
      `${stegaUrl}/api/twilio/sms`,
      cy.phone,
      FROM,
      `ACK ${anyPage.rows[0]?.id}`,
    );
    expect(stranger.text).toContain('not a verified');
    const chain = await pool.query('select stopped_at from stega.escalations where id = $1', [
      escalationId,
    ]);
    expect(chain.rows[0]?.stopped_at).toBeNull();

    // a status callback replayed, and one with a bad signature: refused, no receipt added
    const genuine = twilio.callbacks.find((c) => c.answered === 204);
    if (!genuine) throw new Error('no status callback was accepted');
    const receipts = async () =>
      Number((await pool.query('select count(*) as n from stega.delivery_receipts')).rows[0]?.n);
    const before = await receipts();
    expect((await twilio.post(genuine.url, genuine.params)).status).toBe(409);
    const tampered = { ...genuine.params, MessageStatus: 'failed', CallStatus: 'failed' };
    expect((await twilio.post(genuine.url, tampered, 'bm90LXRoZS1zaWduYXR1cmU=')).status).toBe(403);
    expect(await receipts()).toBe(before);
  });

  it('a voice call reads the alert; pressing 1 acknowledges (another key does not)', async () => {
    const eli = await person('Eli', '+14155550105', { sms: false, voice: true });
    await rules(eli.id, [{ method: 'voice', delay_minutes: 0 }]);
    const { ticketId, escalationId } = await page('eli', [eli.id]);
    const call = await eventually(
      async () => twilio.voiceCalls().find((c) => c.to === eli.phone && /<Gather/.test(c.body)),
      'the call',
      PROCESS_PATIENCE,
    );
    expect(call.body).toContain(`Ticket #${ticketId}`);
    expect(call.body).toContain('Press 1 to acknowledge');
    const other = await twilio.press(call, '2');
    expect(other.text).toContain('Not acknowledged');
    const stopped = async () =>
      (
        await pool.query('select acknowledged_via from stega.escalations where id = $1', [
          escalationId,
        ])
      ).rows[0]?.acknowledged_via;
    expect(await stopped()).toBeNull();
    const pressed = await twilio.press(call, '1');
    expect(pressed.text).toContain('Acknowledged');
    expect(await stopped()).toBe('voice');
  });

  it('a Slack direct message: the user links themselves, then its Acknowledge button acknowledges; forged, stale and repeated presses change nothing', async () => {
    const interactions = `${stegaUrl}/api/slack/interactions`;
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Fay',
      email: 'fay@oncall.test',
    });
    const added = await stega.api<{ id: number; verified: boolean }>(
      'POST',
      `/api/agents/${agent.body.id}/contact-methods`,
      { method: 'slack_dm', address: 'U0FAY12345' },
    );
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.verified).toBe(false);
    const link = slack.posted.find((m) => m.channel === 'U0FAY12345');
    if (!link) throw new Error('no link message');
    const linkValue = slack.buttonValue(link, 'link_slack_user') ?? '';
    // someone else pressing it links nobody
    expect(
      (await slack.press(interactions, 'U0OTHER999', 'link_slack_user', linkValue)).text,
    ).toContain('not for you');
    expect(
      (await slack.press(interactions, 'U0FAY12345', 'link_slack_user', linkValue)).status,
    ).toBe(200);
    const methods = await stega.api<{ items: { verified: boolean }[] }>(
      'GET',
      `/api/agents/${agent.body.id}/contact-methods`,
    );
    expect(methods.body.items.map((m) => m.verified)).toEqual([true]);

    await rules(agent.body.id, [{ method: 'slack_dm', delay_minutes: 0 }]);
    const { escalationId } = await page('fay', [agent.body.id]);
    const dm = await eventually(
      async () =>
        slack.posted.find(
          (m) =>
            m.channel === 'U0FAY12345' && slack.buttonValue(m, 'acknowledge_page') !== undefined,
        ),
      'the direct message',
      PROCESS_PATIENCE,
    );
    const value = slack.buttonValue(dm, 'acknowledge_page') ?? '';
    const acknowledged = async () =>
      (
        await pool.query('select acknowledged_via from stega.escalations where id = $1', [
          escalationId,
        ])
      ).rows[0]?.acknowledged_via;
    const forged = await slack.press(interactions, 'U0FAY12345', 'acknowledge_page', value, {
      signature: `v0=${'0'.repeat(64)}`,
    });
    expect(forged.status).toBe(401);
    const stale = await slack.press(interactions, 'U0FAY12345', 'acknowledge_page', value, {
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    expect(stale.status).toBe(401);
    expect(
      (await slack.press(interactions, 'U0OTHER999', 'acknowledge_page', value)).text,
    ).toContain('not for you');
    expect(await acknowledged()).toBeNull();
    const pressed = await slack.press(interactions, 'U0FAY12345', 'acknowledge_page', value);
    expect(pressed.status).toBe(200);
    expect(pressed.text).toContain('Acknowledged');
    expect(await acknowledged()).toBe('slack');
    expect((await slack.press(interactions, 'U0FAY12345', 'acknowledge_page', value)).status).toBe(
      409,
    );
  });

  it('refuses a malformed phone number with a 400 naming the field', async () => {
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Dee',
      email: 'dee@oncall.test',
    });
    const bad = await stega.api<{ error: string; issues?: { path: string }[] }>(
      'POST',
      `/api/agents/${agent.body.id}/contact-methods`,
      { method: 'sms', address: '0044 20 7946 0000' },
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('address');
    expect(JSON.stringify(bad.body)).toContain('E.164');
  });
});
