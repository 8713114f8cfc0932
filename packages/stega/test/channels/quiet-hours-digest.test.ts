import { describe, expect, it } from 'vitest';
import type { PagedPerson } from '../../src/db/notification-rules.js';
import type { AlertEvent } from '../../src/delivery/alert-kinds.js';
import type { Delivery } from '../../src/delivery/channel.js';
import { CHANNELS, channelNamed } from '../../src/delivery/channels/registry.js';
import { digestOf } from '../../src/delivery/digest.js';
import { personPage } from '../../src/delivery/page-plan.js';

const at = (iso: string) => Date.parse(iso);

const payload = (ticketId: number, warningId: number) => ({
  version: 1 as const,
  ticket_id: ticketId,
  kind: 'first_response' as const,
  due_at: '2026-03-29T03:00:00Z',
  detected_at: '2026-03-29T00:30:00Z',
  subject: `Printer ${ticketId} on fire`,
  priority: 'high' as const,
  assignee: null,
  requester: { name: 'Ana', email: 'ana@example.test', org: null },
  warning_id: warningId,
  elapsed_share: 0.8,
});
const warning = (ticketId: number, warningId: number): AlertEvent => ({
  type: 'warning',
  payload: payload(ticketId, warningId),
});
const breach: AlertEvent = {
  type: 'breach',
  payload: { ...payload(7, 1), breach_id: 3 } as AlertEvent['payload'] & { breach_id: number },
} as AlertEvent;

const person: PagedPerson = {
  agentId: 5,
  email: 'carla@example.test',
  zone: 'Europe/Berlin',
  steps: [{ method: 'email', delaySeconds: 0 }],
  quiet: { start: '22:00', end: '07:00' },
  contacts: [],
};
const base = {
  alert_type: 'warning' as const,
  alert_id: 1,
  ticket_id: 7,
  give_up_seconds: 3600,
  retry_delays: [1],
  payload: {},
  batch_id: '1',
  event_id: '1',
};
const settings = {
  channels: { emailEndpoint: 'smtp', pagerDutyUrl: 'https://pd.invalid' },
  timeScale: 0.01,
};

describe('personPage: quiet hours hold low urgency', () => {
  it('holds a warning paged at 01:30 CET on the night clocks go forward until 07:00 CEST (05:00Z), its wait scaled', () => {
    const now = at('2026-03-29T00:30:00Z');
    const page = personPage(
      warning(7, 1),
      5,
      { ...person, steps: [{ method: 'email', delaySeconds: 0 }] },
      base,
      settings,
      {
        zone: 'Europe/Berlin',
        now,
      },
    );
    expect(page.planned).toHaveLength(1);
    const [row] = page.planned;
    expect(row?.status).toBe('scheduled');
    expect(row?.held_until).toBe('2026-03-29T05:00:00.000Z');
    // 4.5 real hours to the end, scaled by 0.01
    expect(row?.wait_seconds).toBeCloseTo(4.5 * 3600 * 0.01, 6);
  });

  it('judges each step at its own instant: a step whose delay takes it past the end is not held', () => {
    const now = at('2026-03-29T04:30:00Z'); // 06:30 CEST
    const page = personPage(
      warning(7, 1),
      5,
      { ...person, steps: [{ method: 'email', delaySeconds: 60 * 60 }] },
      base,
      settings,
      { zone: 'Europe/Berlin', now },
    );
    expect(page.planned[0]?.held_until).toBeUndefined();
    expect(page.planned[0]?.wait_seconds).toBeCloseTo(3600 * 0.01, 6);
  });

  it('never holds a breach (high urgency), sent at once', () => {
    const page = personPage(
      breach,
      5,
      { ...person, steps: [{ method: 'email', delaySeconds: 0 }] },
      { ...base, alert_type: 'breach' },
      settings,
      { zone: 'Europe/Berlin', now: at('2026-03-29T00:30:00Z') },
    );
    expect(page.planned[0]?.status).toBe('sending');
    expect(page.planned[0]?.held_until).toBeUndefined();
  });
});

describe('digestOf: one message for the held warnings', () => {
  it('says how many, and lists each with its ticket, what and when in the reader zone', () => {
    const digest = digestOf(
      [
        {
          id: 1,
          alert_type: 'warning',
          ticket_id: 7,
          payload: payload(7, 1),
          created_at: new Date('2026-03-29T00:30:00Z'),
        },
        {
          id: 2,
          alert_type: 'warning',
          ticket_id: 8,
          payload: payload(8, 2),
          created_at: new Date('2026-03-29T02:15:00Z'),
        },
      ],
      {
        zone: 'Europe/Berlin',
        heldUntil: new Date('2026-03-29T05:00:00Z'),
        publicUrl: 'https://stega.example',
        now: new Date('2026-03-29T05:00:00Z'),
      },
    );
    expect(digest.subject).toBe('2 warnings held during your quiet hours');
    expect(digest.heldUntil).toBe('2026-03-29 07:00 (Europe/Berlin, UTC+02:00)');
    expect(digest.items.map((i) => i.line)).toEqual([
      'Ticket #7 first response SLA at risk (80 % elapsed): Printer 7 on fire, at 2026-03-29 01:30 (Europe/Berlin, UTC+01:00)',
      'Ticket #8 first response SLA at risk (80 % elapsed): Printer 8 on fire, at 2026-03-29 04:15 (Europe/Berlin, UTC+02:00)',
    ]);
    expect(digest.text).toContain('https://stega.example/tickets/8');
  });
});

describe('every person method sends the same digest in its own shape', () => {
  const digest = digestOf(
    [7, 8, 9].map((ticket, i) => ({
      id: i + 1,
      alert_type: 'warning',
      ticket_id: ticket,
      payload: payload(ticket, i + 1),
      created_at: new Date('2026-03-29T00:30:00Z'),
    })),
    {
      zone: 'UTC',
      heldUntil: new Date('2026-03-29T05:00:00Z'),
      publicUrl: 'https://stega.example',
      now: new Date('2026-03-29T05:00:00Z'),
    },
  );
  const delivery = (channel: string, recipient: string, secret: string | null) =>
    ({
      row: {
        id: 1,
        alert_type: 'warning',
        alert_id: 1,
        ticket_id: 7,
        channel,
        recipient,
        fallback: false,
        endpoint: null,
        attempts: 1,
        give_up_at: null,
        retry_delays: null,
        payload: payload(7, 1),
        secret,
        claim_token: '00000000-0000-0000-0000-000000000000',
        probe: false,
        held_until: new Date('2026-03-29T05:00:00Z'),
      },
      alert: warning(7, 1),
      key: 'warning-1-abc',
      settings: { publicUrl: 'https://stega.example', timeZone: 'UTC' },
      digest,
    }) as unknown as Delivery;

  it('email, SMS, push, Slack DM and voice each carry the count and every ticket', async () => {
    const subscription = JSON.stringify({
      endpoint: 'https://push.example/abc',
      keys: { p256dh: 'p', auth: 'a' },
    });
    const built = {
      email: await CHANNELS.email.build(delivery('email', 'carla@example.test', null)),
      sms: await channelNamed('sms')?.build(delivery('sms', 'agent:5/sms/1', '+14155550100')),
      push: await channelNamed('push')?.build(delivery('push', 'agent:5/push/2', subscription)),
      slack_dm: await channelNamed('slack_dm')?.build(
        delivery('slack_dm', 'agent:5/slack_dm/3', 'U123'),
      ),
      voice: await channelNamed('voice')?.build(delivery('voice', 'agent:5/voice/4', '+1415')),
    };
    expect(built.email.subject).toBe('[Stega] 3 warnings held during your quiet hours');
    for (const [method, message] of Object.entries(built)) {
      const text = JSON.stringify(message);
      expect(text, method).toContain('3 warnings held during your quiet hours');
      for (const ticket of [7, 8, 9]) expect(text, method).toMatch(new RegExp(`#${ticket}\\b`));
    }
    // a digest of warnings offers nothing to acknowledge
    expect(JSON.stringify(built.voice)).not.toContain('Gather');
    expect(JSON.stringify(built.sms)).not.toContain('ACK');
  });
});
