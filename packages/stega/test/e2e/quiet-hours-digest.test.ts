import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startTwilioReceiver } from '../../../../test-support/twilio-receiver.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { type PagingNames, pagingBreach } from './paging-breach.js';
import { startPagingScene, twilioEnv } from './paging-scene.js';

/**
 * Waits are scaled like every delay: quiet hours ending 2–3 minutes from now end, for the
 * ledger, 6–9 s from now.
 */
const SCALE = 0.05;
const SID = `AC${'fedcba9876543210'.repeat(2)}`;
const TOKEN = 'twilio-auth-token-quiet-0123456789';
const FROM = '+15005550006';

type Row = Record<string, unknown>;

const PAGING_NAMES: PagingNames = {
  escalation: 'quiet page',
  policy: 'quiet breach policy',
  org: 'Quiet breach org',
  subject: 'Quiet breach',
  requesterEmail: 'req@quiet.test',
};

/** `HH:MM` (UTC) of `ms`. */
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/**
 * Quiet hours through the real processes: `stega start` (web server and an
 * sla-breach-worker) mailing a local SMTP sink; people, rules and quiet hours set through the
 * API; warnings and a breach detected by the breach job's function.
 */
describe('end to end: warnings in quiet hours are held and sent at their end as one digest', async () => {
  const twilio = await startTwilioReceiver({ accountSid: SID, authToken: TOKEN });
  const { pool, smtp, stega, calendarId } = await startPagingScene(
    SCALE,
    twilioEnv(twilio.url, { sid: SID, token: TOKEN, from: FROM }),
    [twilio],
  );

  /** An agent (zone UTC) reached by email for both urgencies, quiet from an hour ago until 2–3 min from now. */
  async function quietPerson(name: string, low = [{ method: 'email', delay_minutes: 0 }]) {
    const email = `${name.toLowerCase()}@quiet.test`;
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name,
      email,
      time_zone: 'UTC',
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const id = agent.body.id;
    const rules = await stega.api('PUT', `/api/agents/${id}/notification-rules`, {
      high: [{ method: 'email', delay_minutes: 0 }],
      low,
    });
    expect(rules.status, JSON.stringify(rules.body)).toBe(200);
    const now = Date.now();
    const end = Math.floor(now / 60_000) * 60_000 + 3 * 60_000;
    const quiet = await stega.api('PUT', `/api/agents/${id}/quiet-hours`, {
      start: hhmm(now - 3_600_000),
      end: hhmm(end),
    });
    expect(quiet.status, JSON.stringify(quiet.body)).toBe(200);
    return { id, email, end };
  }

  /** `count` tickets assigned to `agentId` under a policy warning at half of a 60-minute first response. */
  async function warnedTickets(tag: string, agentId: number, count: number) {
    const org = `Quiet org ${tag}`;
    const policy = await stega.api('POST', '/api/sla-policies', {
      name: `quiet policy ${tag}`,
      priority: 'normal',
      requester_org: org,
      first_response_minutes: 60,
      resolution_minutes: 6000,
      warning_thresholds: [0.5],
      calendar_id: calendarId,
      alert_channels: { in_app: true },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
        subject: `Quiet ${tag} ${i}`,
        requester_name: 'Requester',
        requester_email: `req-${tag}@quiet.test`,
        requester_org: org,
        priority: 'normal',
        assignee_id: agentId,
      });
      expect(ticket.status, JSON.stringify(ticket.body)).toBe(201);
      ids.push(ticket.body.id);
    }
    return ids;
  }

  const stepRows = async (agentId: number) =>
    (
      await pool.query(
        `select id, alert_type, ticket_id, status, held_until, digest_of, next_attempt_at,
                delivered_at, last_error
           from stega.alert_deliveries where page_agent_id = $1 order by id`,
        [agentId],
      )
    ).rows as Row[];

  const mailTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));
  /** A message's subject and decoded text. */
  const read = async (raw: string) => {
    const mail = await simpleParser(raw);
    return { subject: mail.subject ?? '', text: mail.text ?? '' };
  };

  it('three warnings inside the quiet hours: nothing sent then, one digest listing all three at their end', async () => {
    const bea = await quietPerson('Bea');
    const tickets = await warnedTickets('bea', bea.id, 3);
    await checkSlaBreaches(pool, new Date(Date.now() + 35 * 60_000));

    // each warning's email step is held until the end of the quiet hours
    const held = await eventually(
      async () => {
        const rows = await stepRows(bea.id);
        return rows.length === 3 ? rows : undefined;
      },
      'the three held steps',
      PROCESS_PATIENCE,
    );
    for (const row of held) {
      expect(row.alert_type).toBe('warning');
      expect((row.held_until as Date).getTime()).toBe(bea.end);
    }
    const dueAt = Math.min(...held.map((r) => (r.next_attempt_at as Date).getTime()));
    // the person's log says so (and the API shape carries it)
    const log = await stega.api<{ items: { status: string; held_until: string | null }[] }>(
      'GET',
      `/api/agents/${bea.id}/notification-log`,
    );
    expect(log.status).toBe(200);
    expect(log.body.items.filter((i) => i.held_until !== null)).toHaveLength(3);

    const digest = await eventually(
      async () => mailTo(bea.email)[0],
      'the digest',
      PROCESS_PATIENCE,
    );
    // not before the (scaled) end of the quiet hours
    expect(digest.at).toBeGreaterThanOrEqual(dueAt - 50);
    const body = await read(digest.raw);
    expect(body.subject).toBe('[Stega] 3 warnings held during your quiet hours');
    for (const id of tickets) {
      // ticket, what and when (elapsed share as detected: the run is 35 min ahead)
      expect(body.text).toMatch(
        new RegExp(
          `Ticket #${id} first response SLA at risk \\(\\d+ % elapsed\\): Quiet bea \\d, at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d \\(UTC`,
        ),
      );
    }
    const rows = await eventually(
      async () => {
        const now = await stepRows(bea.id);
        return now.every((r) => r.status === 'delivered') ? now : undefined;
      },
      'every held row delivered by the one send',
      PROCESS_PATIENCE,
    );
    // one row's send carried the other two
    const carriers = rows.filter((r) => r.digest_of === null);
    expect(carriers).toHaveLength(1);
    expect(rows.filter((r) => r.digest_of === carriers[0]?.id)).toHaveLength(2);
    // one message only: no warning went on its own
    expect(mailTo(bea.email)).toHaveLength(1);
  });

  it('a breach during the quiet hours goes at once (high urgency is never held)', async () => {
    const cy = await quietPerson('Cy');
    await pagingBreach(stega, pool, calendarId, PAGING_NAMES, 'cy', [cy.id]);
    const page = await eventually(
      async () => mailTo(cy.email)[0],
      'the breach page',
      PROCESS_PATIENCE,
    );
    // inside the quiet hours, on the real clock
    expect(page.at).toBeLessThan(cy.end);
    expect((await read(page.raw)).subject).toMatch(/SLA breached, escalation level 0/);
    const rows = await stepRows(cy.id);
    expect(rows.map((r) => [r.alert_type, r.held_until])).toEqual([['escalation', null]]);
  });

  it('a held warning whose ticket was resolved before the end is left out of the digest', async () => {
    const dee = await quietPerson('Dee');
    const [kept, resolved] = await warnedTickets('dee', dee.id, 2);
    await checkSlaBreaches(pool, new Date(Date.now() + 35 * 60_000));
    await eventually(
      async () => ((await stepRows(dee.id)).length === 2 ? true : undefined),
      'the two held steps',
      PROCESS_PATIENCE,
    );
    const done = await stega.api('POST', `/api/tickets/${resolved}/transitions`, {
      status: 'resolved',
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    const digest = await eventually(
      async () => mailTo(dee.email)[0],
      'the digest',
      PROCESS_PATIENCE,
    );
    const body = await read(digest.raw);
    expect(body.subject).toBe('[Stega] 1 warning held during your quiet hours');
    expect(body.text).toContain(`Ticket #${kept} first response`);
    expect(body.text).not.toContain(`Ticket #${resolved} `);
    const rows = await eventually(
      async () => {
        const now = await stepRows(dee.id);
        // settled: neither held nor being sent (the sink has the digest before the worker
        // records its outcome)
        return now.every((r) => r.status !== 'scheduled' && r.status !== 'sending')
          ? now
          : undefined;
      },
      'the resolved ticket’s held step settled',
      PROCESS_PATIENCE,
    );
    const byTicket = new Map(rows.map((r) => [Number(r.ticket_id), r]));
    expect(byTicket.get(kept as number)?.status).toBe('delivered');
    expect(byTicket.get(resolved as number)?.status).toBe('cancelled');
    expect(byTicket.get(resolved as number)?.last_error).toBe(
      'cancelled: the ticket was resolved before the end of the quiet hours',
    );
    expect(mailTo(dee.email)).toHaveLength(1);
  });

  it('one send, one outcome: a digest Twilio keeps refusing fails for good for every held row it carried', async () => {
    const phone = '+14155550177';
    const eve = await quietPerson('Eve', [{ method: 'sms', delay_minutes: 0 }]);
    const added = await stega.api<{ id: number }>('POST', `/api/agents/${eve.id}/contact-methods`, {
      method: 'sms',
      address: phone,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const code = (
      twilio
        .messages()
        .find((m) => m.to === phone)
        ?.body.match(/\d/g) ?? []
    )
      .join('')
      .slice(-6);
    const verified = await stega.api<{ verified: boolean }>(
      'POST',
      `/api/agents/${eve.id}/contact-methods/${added.body.id}/verify`,
      { code },
    );
    expect(verified.body.verified).toBe(true);
    const texts = twilio.messages().length;
    const refusedBefore = twilio.calls.filter((c) => c.status === 503).length;
    twilio.down(503);
    try {
      await warnedTickets('eve', eve.id, 2);
      await checkSlaBreaches(pool, new Date(Date.now() + 35 * 60_000));
      const rows = await eventually(
        async () => {
          const now = await stepRows(eve.id);
          return now.length === 2 && now.every((r) => r.status === 'failed_permanent')
            ? now
            : undefined;
        },
        'both held rows failed for good',
        PROCESS_PATIENCE,
      );
      // retried as one digest, then given up: both rows carry that send's outcome
      expect(twilio.calls.filter((c) => c.status === 503).length - refusedBefore).toBeGreaterThan(
        1,
      );
      const carrier = rows.find((r) => r.digest_of === null);
      const carried = rows.filter((r) => r !== carrier);
      expect(carried.map((r) => r.digest_of)).toEqual([carrier?.id]);
      expect(carried[0]?.last_error).toBe(carrier?.last_error);
      expect(twilio.messages().length).toBe(texts);
    } finally {
      twilio.up();
    }
  });
});
