import { afterAll, describe, expect, it } from 'vitest';
import {
  pagerDutyEventErrors,
  startPagerDutyReceiver,
  startSlackReceiver,
  startTeamsReceiver,
} from '../../../../test-support/service-receivers.js';
import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';
import { alertFacts, type ChannelAlert, durationWords } from '../../src/delivery/alert-facts.js';
import {
  pagerDutyDedupKey,
  pagerDutyEvent,
  pagerDutyRecipient,
  postPagerDuty,
} from '../../src/delivery/channels/pagerduty.js';
import { postSlack, slackEscape, slackMessage } from '../../src/delivery/channels/slack.js';
import {
  ADAPTIVE_CARD_CONTENT_TYPE,
  ADAPTIVE_CARD_SCHEMA,
  postTeams,
  teamsMessage,
} from '../../src/delivery/channels/teams.js';
import { CallFailed, delivered } from '../support/call-failed.js';

const DUE = '2026-12-01T14:30:00.000Z';
const breach: ChannelAlert = {
  type: 'breach',
  payload: {
    version: 1,
    breach_id: 42,
    ticket_id: 7,
    kind: 'first_response',
    due_at: DUE,
    detected_at: '2026-12-01T14:30:01.000Z',
    subject: 'Printer <!channel> on fire & smoking',
    priority: 'urgent',
    assignee: { id: 3, name: 'Carla Dias', email: 'carla@example.test' },
    requester: { name: 'Ana', email: 'ana@example.test', org: 'Acme' },
  },
};
const warning: ChannelAlert = {
  type: 'warning',
  payload: { ...breach.payload, warning_id: 9, elapsed_share: 0.8 },
} as ChannelAlert;
const at = (iso: string) => new Date(iso);
const options = {
  publicUrl: 'https://help.example.test/',
  now: at('2026-12-01T15:35:00Z'),
  acknowledgeUrl: 'https://help.example.test/ack/abc.def',
};
const KEY = 'R0123456789abcdefABCDEF012345678';

/**
 * Block Kit's documented rules for the blocks we send: header (plain_text, ≤150), section
 * (text mrkdwn ≤3000, ≤10 fields of ≤2000), actions (≤25 elements; buttons with plain_text
 * ≤75, url ≤3000, action_id unique and ≤255); at most 50 blocks.
 */
function blockKitErrors(message: { text?: unknown; blocks?: unknown }): string[] {
  const errors: string[] = [];
  if (typeof message.text !== 'string') errors.push('top-level text is the notification fallback');
  const blocks = message.blocks as Record<string, any>[];
  if (!Array.isArray(blocks) || blocks.length > 50) return [...errors, 'blocks: 1..50'];
  const ids = new Set<string>();
  for (const block of blocks) {
    if (block.type === 'header') {
      if (block.text?.type !== 'plain_text') errors.push('header text must be plain_text');
      if (String(block.text?.text).length > 150) errors.push('header text ≤ 150');
    } else if (block.type === 'section') {
      if (block.text && (block.text.type !== 'mrkdwn' || block.text.text.length > 3000))
        errors.push('section text');
      if (
        block.fields &&
        (block.fields.length > 10 || block.fields.some((f: any) => f.text.length > 2000))
      )
        errors.push('section fields');
    } else if (block.type === 'actions') {
      if (block.elements.length > 25) errors.push('actions ≤ 25');
      for (const e of block.elements) {
        if (e.type !== 'button') errors.push('only buttons');
        if (e.text?.type !== 'plain_text' || e.text.text.length > 75) errors.push('button text');
        if (typeof e.url !== 'string' || e.url.length > 3000) errors.push('button url');
        if (!e.action_id || ids.has(e.action_id) || e.action_id.length > 255)
          errors.push('action_id');
        ids.add(e.action_id);
        if (e.style && !['primary', 'danger'].includes(e.style)) errors.push('button style');
      }
    } else errors.push(`unexpected block ${block.type}`);
  }
  return errors;
}

describe('chat and on-call adapters', async () => {
  const slack = await startSlackReceiver();
  const teams = await startTeamsReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  afterAll(async () => {
    await Promise.all([slack.stop(), teams.stop(), pagerDuty.stop()]);
  });
  const net = { timeoutMs: 2000, allowedNetworks: [RECEIVER_NETWORKS] };

  it('states time left and overdue for anyone: relative as of the send, and in UTC', () => {
    expect(durationWords(65 * 60_000)).toBe('1 h 5 min');
    expect(durationWords(26 * 3_600_000)).toBe('1 d 2 h');
    expect(durationWords(30_000)).toBe('30 s');
    const overdue = alertFacts(breach, options);
    expect(overdue.timeLeft).toBe('overdue by 1 h 5 min');
    expect(overdue.dueUtc).toBe('2026-12-01 14:30 UTC');
    expect(overdue.ticketUrl).toBe('https://help.example.test/tickets/7');
    const early = alertFacts(warning, { ...options, now: at('2026-12-01T14:10:00Z') });
    expect(early.timeLeft).toBe('due in 20 min');
    expect(early.title).toBe('Ticket #7 first response SLA at risk (80 % elapsed)');
  });

  it('Slack: a Block Kit message (header, section with the facts, link buttons) that Slack accepts with 200 ok', async () => {
    const message = slackMessage(alertFacts(breach, options));
    expect(blockKitErrors(message)).toEqual([]);
    await delivered(postSlack({ url: slack.url, message, ...net }));
    const call = slack.accepted.at(-1);
    expect(call?.headers['content-type']).toBe('application/json');
    const sent = call?.json as typeof message;
    expect(sent).toEqual(message);
    const [header, section, actions] = sent.blocks as Record<string, any>[];
    expect(header).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Ticket #7 first response SLA breached' },
    });
    // the customer's subject cannot mention @channel or make a link: escaped as Slack asks
    expect(section?.text.text).toBe(
      '*<https://help.example.test/tickets/7|Printer &lt;!channel&gt; on fire &amp; smoking>*',
    );
    const fields = section?.fields.map((f: { text: string }) => f.text);
    expect(fields).toContain('*Overdue*\noverdue by 1 h 5 min');
    // each reader sees the due time in their own zone (Slack's date token), UTC beside it
    expect(fields).toContain(
      '*Due*\n<!date^1796135400^{date_short_pretty} {time}|2026-12-01 14:30 UTC> (2026-12-01 14:30 UTC)',
    );
    expect(
      actions?.elements.map((b: { action_id: string; url: string }) => [b.action_id, b.url]),
    ).toEqual([
      ['open_ticket', 'https://help.example.test/tickets/7'],
      ['acknowledge', 'https://help.example.test/ack/abc.def'],
    ]);
    expect(slackEscape('<@U123> & <!here>')).toBe('&lt;@U123&gt; &amp; &lt;!here&gt;');
  });

  it('Slack: no acknowledge button without an acknowledge link', () => {
    const message = slackMessage(alertFacts(breach, { ...options, acknowledgeUrl: undefined }));
    const actions = message.blocks.at(-1) as { elements: { action_id: string }[] };
    expect(actions.elements.map((b) => b.action_id)).toEqual(['open_ticket']);
  });

  it("Slack: its error answers carry Slack's word (invalid_payload, channel_is_archived, no_service) and the status", async () => {
    const message = slackMessage(alertFacts(breach, options));
    for (const [status, word] of [
      [400, 'invalid_payload'],
      [403, 'action_prohibited'],
      [404, 'no_service'],
      [410, 'channel_is_archived'],
      [429, 'rate_limited'],
      [500, 'rollup_error'],
    ] as const) {
      slack.script({ status, body: word });
      const error = await delivered(postSlack({ url: slack.url, message, ...net })).catch((e) => e);
      expect(error).toBeInstanceOf(CallFailed);
      expect(error.status).toBe(status);
      expect(error.message).toContain(`answered ${status} (${word})`);
      // the URL (the webhook's secret) shows masked
      expect(error.message).toContain('http://127.0.0.1:');
      expect(error.message).not.toContain('/hook');
    }
    // and a body Slack cannot read is refused by the receiver, as Slack does
    const refused = await delivered(
      postSlack({
        url: slack.url,
        message: {} as ReturnType<typeof slackMessage>,
        ...net,
      }),
    ).catch((e) => e);
    expect(refused.message).toContain('answered 400 (invalid_payload)');
  });

  it('Teams: a message whose attachment is an Adaptive Card 1.4 with $schema, title, facts and Action.OpenUrl', async () => {
    const message = teamsMessage(alertFacts(breach, options));
    await delivered(postTeams({ url: teams.url, message, ...net }));
    const sent = teams.accepted.at(-1)?.json as Record<string, any>;
    expect(teams.accepted.at(-1)?.status).toBe(202);
    expect(sent.type).toBe('message');
    expect(sent.attachments).toHaveLength(1);
    const attachment = sent.attachments[0];
    expect(attachment.contentType).toBe(ADAPTIVE_CARD_CONTENT_TYPE);
    expect(attachment.contentType).toBe('application/vnd.microsoft.card.adaptive');
    const card = attachment.content;
    expect(card.$schema).toBe(ADAPTIVE_CARD_SCHEMA);
    expect(card.type).toBe('AdaptiveCard');
    expect(card.version).toBe('1.4');
    expect(card.body[0]).toMatchObject({
      type: 'TextBlock',
      text: 'Ticket #7 first response SLA breached',
      weight: 'Bolder',
    });
    const facts = card.body.find((b: { type: string }) => b.type === 'FactSet').facts;
    expect(facts).toContainEqual({ title: 'Overdue', value: 'overdue by 1 h 5 min' });
    expect(facts).toContainEqual({ title: 'Due (UTC)', value: '2026-12-01 14:30 UTC' });
    for (const fact of facts) expect(Object.keys(fact).sort()).toEqual(['title', 'value']);
    // Teams renders DATE/TIME in the reader's zone; RFC 3339 without fractions
    expect(JSON.stringify(card.body)).toContain(
      '{{DATE(2026-12-01T14:30:00Z, SHORT)}} {{TIME(2026-12-01T14:30:00Z)}}',
    );
    expect(card.actions).toEqual([
      {
        type: 'Action.OpenUrl',
        title: 'Open ticket #7',
        url: 'https://help.example.test/tickets/7',
      },
      {
        type: 'Action.OpenUrl',
        title: 'Acknowledge',
        url: 'https://help.example.test/ack/abc.def',
      },
    ]);
  });

  it('PagerDuty: a trigger has the v2 fields (routing_key, event_action, dedup_key, payload summary/source/severity/timestamp/custom_details, links) and is accepted with 202', async () => {
    const facts = alertFacts(breach, options);
    const event = pagerDutyEvent({
      action: 'trigger',
      routingKey: KEY,
      facts,
      severity: 'critical',
      detectedAt: breach.payload.detected_at,
      source: 'stega@help.example.test',
      publicUrl: options.publicUrl,
    });
    expect(pagerDutyEventErrors(event)).toEqual([]);
    await delivered(postPagerDuty({ url: pagerDuty.url, event, routingKey: KEY, ...net }));
    const call = pagerDuty.accepted.at(-1);
    expect(call?.status).toBe(202);
    const sent = call?.json as Record<string, any>;
    expect(sent).toMatchObject({
      routing_key: KEY,
      event_action: 'trigger',
      dedup_key: 'stega-7-first_response-1796135400000-breach',
      payload: {
        summary: expect.stringContaining('Ticket #7 first response SLA breached'),
        source: 'stega@help.example.test',
        severity: 'critical',
        timestamp: '2026-12-01T14:30:01.000Z',
        custom_details: expect.objectContaining({
          ticket_id: 7,
          due_at: DUE,
          time_left: 'overdue by 1 h 5 min',
        }),
      },
      links: [
        { href: 'https://help.example.test/tickets/7', text: 'Ticket #7 in Stega' },
        { href: 'https://help.example.test/ack/abc.def', text: 'Acknowledge in Stega' },
      ],
    });
  });

  it('PagerDuty: acknowledge and resolve name the same dedup_key and nothing else', () => {
    const facts = alertFacts(breach, options);
    for (const action of ['acknowledge', 'resolve'] as const) {
      const event = pagerDutyEvent({
        action,
        routingKey: KEY,
        facts,
        severity: 'critical',
        detectedAt: breach.payload.detected_at,
        source: 's',
        publicUrl: options.publicUrl,
      });
      expect(event).toEqual({
        routing_key: KEY,
        event_action: action,
        dedup_key: pagerDutyDedupKey(facts),
      });
      expect(pagerDutyDedupKey(facts)).toBe('stega-7-first_response-1796135400000-breach');
      expect(pagerDutyEventErrors(event)).toEqual([]);
    }
  });

  it('PagerDuty: a 400 says why; the routing key never shows in an error or a recipient', async () => {
    const bad = {
      routing_key: KEY,
      event_action: 'trigger',
      dedup_key: 'x',
      payload: { summary: '' },
    };
    const error = await delivered(
      postPagerDuty({
        url: pagerDuty.url,
        event: bad,
        routingKey: KEY,
        ...net,
      }),
    ).catch((e) => e);
    expect(error).toBeInstanceOf(CallFailed);
    expect(error.status).toBe(400);
    expect(error.message).toContain('invalid event');
    pagerDuty.script({ status: 400, body: `routing key ${KEY} is unknown` });
    const echoed = await delivered(
      postPagerDuty({
        url: pagerDuty.url,
        event: bad,
        routingKey: KEY,
        ...net,
      }),
    ).catch((e) => e);
    expect(echoed.message).not.toContain(KEY);
    expect(echoed.message).toContain('…5678');
    expect(pagerDutyRecipient('trigger', KEY)).toMatch(/^trigger:…5678:[0-9a-f]{12}$/);
    expect(pagerDutyRecipient('trigger', KEY)).not.toContain(KEY);
  });

  it('reads only the start of an answer: a huge error body costs nothing and the message stays short', async () => {
    slack.script({ status: 400, body: `invalid_payload\n${'x'.repeat(5_000_000)}` });
    const message = slackMessage(alertFacts(breach, options));
    const error = await delivered(postSlack({ url: slack.url, message, ...net })).catch((e) => e);
    expect(error.message).toMatch(/answered 400 \(invalid_payload\)$/);
    expect(error.message.length).toBeLessThan(300);
    // the connection pool still works afterwards
    await delivered(postSlack({ url: slack.url, message, ...net }));
  });

  it('refuses private targets unless their network is allowed', async () => {
    const message = slackMessage(alertFacts(breach, options));
    const error = await delivered(postSlack({ url: slack.url, message, timeoutMs: 2000 })).catch(
      (e) => e,
    );
    expect(error.message).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
    const teamsError = await delivered(
      postTeams({ url: teams.url, message: {}, timeoutMs: 2000 }),
    ).catch((e) => e);
    expect(teamsError.message).toMatch(/refused/);
  });
});
