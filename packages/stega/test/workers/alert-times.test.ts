import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { createPool } from '../../src/db/pool.js';
import { AlertDelivery } from '../../src/delivery/alert-delivery.js';
import { createEmailSender } from '../../src/delivery/transport/smtp.js';
import type { SlaBreachedEvent } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import {
  mailBodyOf as bodyOf,
  calendarInsert24x7,
  ticketInsertWithClocks,
} from '../support/fixtures.js';

describe('alert times where the reader lives', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  const email = createEmailSender({ smtpUrl: smtp.url, from: 'stega@example.test', mailDir: '' });
  afterAll(async () => {
    email.close();
    await Promise.all([pool.end(), smtp.stop()]);
  });
  const delivery = new AlertDelivery({
    pool,
    email,
    emailEndpoint: smtp.url,
    webhookTimeoutMs: 2000,
    publicUrl: 'http://localhost:3000',
    timeZone: 'Asia/Tokyo',
    deliveredBy: 'times-test',
    timeScale: 0.01,
    circuitFailures: 3,
    circuitProbeSeconds: 10,
    logger: createLogger('silent', 'test'),
  });

  const agent = async (name: string, address: string, zone: string | null) =>
    Number(
      (
        await pool.query(
          'insert into stega.agents (name, email, time_zone) values ($1, $2, $3) returning id',
          [name, address, zone],
        )
      ).rows[0]?.id,
    );
  // Lisbon moves from UTC+0 to UTC+1 at 2026-03-29 01:00 UTC
  const lisbon = await agent('Lia', 'lia@example.test', 'Europe/Lisbon');
  // no zone of her own: her team's (New York, already on UTC-4 since 8 March)
  const newYork = await agent('Nia', 'Nia@Example.test', null);
  const team = Number(
    (
      await pool.query(
        "insert into stega.teams (name, time_zone) values ('Atlantic', 'America/New_York') returning id",
      )
    ).rows[0]?.id,
  );
  await pool.query('insert into stega.team_members (team_id, agent_id) values ($1, $2), ($1, $3)', [
    team,
    lisbon,
    newYork,
  ]);
  const calendarId = await calendarInsert24x7(pool);
  const due = new Date('2026-03-29T00:30:00Z');
  const detected = new Date('2026-03-29T01:30:00Z');
  const policy = await pool.query(
    `insert into stega.sla_policies (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id, alert_channels)
     values ('times', 'high', 'Times Co', 60, 240, $1, $2) returning id`,
    [
      calendarId,
      {
        in_app: true,
        email: ['lia@example.test', 'nia@example.test', 'someone@elsewhere.test'],
      },
    ],
  );
  const ticketId = await ticketInsertWithClocks(pool, {
    calendarId,
    startedAt: new Date(due.getTime() - 3_600_000),
    firstResponseDue: due,
    resolutionDue: new Date(due.getTime() + 3_600_000),
  });
  await pool.query('update stega.tickets set policy_id = $2, team_id = $3 where id = $1', [
    ticketId,
    policy.rows[0]?.id,
    team,
  ]);
  const breach = await pool.query(
    `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at)
     values ($1, 'first_response', $2, $3) returning id`,
    [ticketId, due, detected],
  );
  const event: SlaBreachedEvent = {
    version: 1,
    breach_id: Number(breach.rows[0]?.id),
    ticket_id: ticketId,
    kind: 'first_response',
    due_at: due.toISOString(),
    detected_at: detected.toISOString(),
    subject: 'Clocks changed',
    priority: 'high',
    assignee: null,
    requester: { name: 'Ana', email: 'ana@example.test', org: 'Times Co' },
  };

  it("states due and detection times in each recipient's zone, across Lisbon's DST change", async () => {
    await delivery.deliver({ type: 'breach', payload: event }, { batchId: 1n, eventId: 1n });
    const mailTo = async (address: string) => {
      const mail = await eventually(
        () => smtp.messages.find((m) => m.to.includes(address)),
        `the mail to ${address}`,
      );
      return bodyOf(mail.raw);
    };
    const lia = await mailTo('lia@example.test');
    // before the change: 00:30 at UTC+0; after it: 02:30 at UTC+1 (not 01:30)
    expect(lia).toContain('due at 2026-03-29 00:30 (Europe/Lisbon, UTC+00:00)');
    expect(lia).toContain('Detected at 2026-03-29 02:30 (Europe/Lisbon, UTC+01:00)');
    const nia = await mailTo('nia@example.test');
    expect(nia).toContain('due at 2026-03-28 20:30 (America/New_York, UTC-04:00)');
    expect(nia).toContain('Detected at 2026-03-28 21:30 (America/New_York, UTC-04:00)');
    const stranger = await mailTo('someone@elsewhere.test');
    expect(stranger).toContain('due at 2026-03-29 09:30 (Asia/Tokyo, UTC+09:00)');
    // the UTC instants stay in the text
    for (const body of [lia, nia, stranger]) {
      expect(body).toContain(
        '(UTC: due 2026-03-29T00:30:00.000Z, detected 2026-03-29T01:30:00.000Z)',
      );
    }

    // the unassigned ticket's in-app alert goes to each member, in their zone
    const { rows } = await pool.query(
      'select agent_id, message from stega.alerts where ticket_id = $1 order by agent_id',
      [ticketId],
    );
    expect(rows.map((r) => [Number(r.agent_id), r.message])).toEqual([
      [
        lisbon,
        expect.stringContaining('overdue since 2026-03-29 00:30 (Europe/Lisbon, UTC+00:00)'),
      ],
      [
        newYork,
        expect.stringContaining('overdue since 2026-03-28 20:30 (America/New_York, UTC-04:00)'),
      ],
    ]);
  });
});
