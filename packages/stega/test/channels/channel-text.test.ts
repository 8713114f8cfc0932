import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import {
  startPagerDutyReceiver,
  startSlackReceiver,
  startTeamsReceiver,
} from '../../../../test-support/service-receivers.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import {
  RECEIVER_NETWORKS,
  startWebhookReceiver,
} from '../../../../test-support/webhook-receiver.js';
import type { AlertEvent } from '../../src/delivery/alert-kinds.js';
import { alertEmailText } from '../../src/delivery/alert-text.js';
import type { ChannelSettings, Delivery, DeliveryChannel } from '../../src/delivery/channel.js';
import { CHANNELS } from '../../src/delivery/channels/registry.js';
import type { ClaimedDelivery } from '../../src/delivery/ledger/rows.js';
import { createEmailSender } from '../../src/delivery/transport/smtp.js';
import { oneLine } from '../../src/delivery/user-text.js';

/**
 * What people wrote is data in every channel, never markup and never a line of its own: an
 * escalation whose subject is a Markdown link, a Slack link, a mention, a script tag and a
 * fake acknowledge line on lines of their own, built by each channel's adapter and sent to
 * the local receivers, then read as each service would read it.
 */

const PUBLIC = 'https://help.example.test';
const ACK = `${PUBLIC}/acknowledge?token=real.token`;
const EVIL = 'https://attacker.example/ack';
const MARKDOWN_LINK = `[Acknowledge now](${EVIL})`;
const FAKE_LINE = `Acknowledge (stops the escalation): ${EVIL}`;
const SUBJECTS = {
  'a Markdown link': MARKDOWN_LINK,
  'newlines and a fake acknowledge line': `Printer down\r\n\r\n${FAKE_LINE}\n\nThanks`,
  'a Slack link, mentions, a script tag': `<${EVIL}|Acknowledge> <!channel> @channel <@U123> <script>alert(1)</script> & more`,
  'Unicode line breaks and a bidirectional override': `Printer\u2028${FAKE_LINE}\u2029\u202Ekca/elpmaxe.rekcatta`,
};

function escalation(subject: string): AlertEvent {
  return {
    type: 'escalation',
    payload: {
      version: 1,
      escalation_id: 5,
      breach_id: 42,
      firing_id: 9,
      level: 1,
      levels: 3,
      delay_minutes: 15,
      fire_at: '2026-12-01T14:45:00.000Z',
      agents: [],
      ticket_id: 7,
      kind: 'first_response',
      due_at: '2026-12-01T14:30:00.000Z',
      detected_at: '2026-12-01T14:30:01.000Z',
      subject,
      priority: 'urgent',
      assignee: { id: 3, name: `Carla **Dias**\n${FAKE_LINE}`, email: 'carla@example.test' },
      requester: {
        name: `Carol (CEO) [click](${EVIL})`,
        email: 'carol@example.test',
        org: 'Acme\nAcknowledge: https://attacker.example',
      },
    },
  } as AlertEvent;
}

const ROUTING_KEY = 'R0123456789abcdefABCDEF012345678';

describe('channel text: what people wrote is data, never markup, never a line of its own', async () => {
  const slack = await startSlackReceiver();
  const teams = await startTeamsReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  const hooks = await startWebhookReceiver();
  const smtp = await startSmtpSink();
  const mailDir = mkdtempSync(path.join(os.tmpdir(), 'stega-channel-text-'));
  const email = createEmailSender({ smtpUrl: smtp.url, from: 'Stega <stega@localhost>', mailDir });
  afterAll(async () => {
    email.close();
    await Promise.all([slack.stop(), teams.stop(), pagerDuty.stop(), hooks.stop(), smtp.stop()]);
    rmSync(mailDir, { recursive: true, force: true });
  });
  const settings: ChannelSettings = {
    publicUrl: PUBLIC,
    timeZone: 'UTC',
    webhookTimeoutMs: 2000,
    allowedNetworks: [RECEIVER_NETWORKS],
    email,
    emailEndpoint: smtp.url,
    pagerDutyUrl: pagerDuty.url,
  };

  /** Builds the channel's message for `alert` to `recipient` and sends it; fails unless delivered. */
  async function send(
    channel: DeliveryChannel,
    alert: AlertEvent,
    recipient: string,
    secret: string | null = null,
  ) {
    const row = {
      id: 1,
      alert_type: alert.type,
      alert_id: 9,
      ticket_id: 7,
      channel: channel.name,
      recipient,
      fallback: false,
      endpoint: null,
      attempts: 0,
      give_up_at: null,
      retry_delays: null,
      payload: alert.payload,
      secret,
      claim_token: 'claim',
      probe: false,
    } as ClaimedDelivery;
    const delivery: Delivery = {
      row,
      alert,
      key: `escalation-7-L1-${recipient.length}`,
      settings,
      zoneOf: async () => 'UTC',
      acknowledgeUrl: async () => ACK,
      triggerStatus: async () => null,
      storedAttachments: async () => new Set(),
      attachmentBytes: async () => null,
    };
    const message = await channel.build(delivery);
    const outcome = await channel.send(message, AbortSignal.timeout(5000), delivery);
    expect(outcome).toEqual({ type: 'delivered' });
    return message;
  }

  for (const [what, subject] of Object.entries(SUBJECTS)) {
    describe(`a subject with ${what}`, () => {
      const alert = escalation(subject);

      it('Slack: escaped (&, <, >), verbatim, on one line; the only links are the ticket and the acknowledge button', async () => {
        await send(CHANNELS.slack, alert, slack.url);
        const sent = slack.accepted.at(-1)?.json as { text: string; blocks: any[] };
        const texts: { text: string; verbatim?: boolean }[] = [];
        for (const block of sent.blocks) {
          if (block.text?.type === 'mrkdwn') texts.push(block.text);
          for (const field of block.fields ?? []) texts.push(field);
          for (const element of block.elements ?? [])
            if (element.type === 'mrkdwn') texts.push(element);
        }
        for (const text of [...texts, { text: sent.text, verbatim: true }]) {
          // every <…> token is Stega's own: the ticket link or a date; anything else is escaped
          for (const token of text.text.match(/<[^>]*>/g) ?? []) {
            expect(token, text.text).toMatch(
              /^<(https:\/\/help\.example\.test\/tickets\/7\||!date\^)/,
            );
          }
          expect(text.text).not.toMatch(/<!channel|<@U|<script|<https:\/\/attacker/);
        }
        // people's text sits in verbatim text objects: no bare URL, @here or #channel is linked
        for (const text of texts.filter((t) => /attacker|Carla|Carol/.test(t.text))) {
          expect(text.verbatim).toBe(true);
        }
        const section = sent.blocks.find((b) => b.type === 'section');
        expect(section.text.text.split('\n')).toHaveLength(1);
        expect(section.text.text).toContain(
          oneLine(subject).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
        );
        const buttons = sent.blocks.find((b) => b.type === 'actions').elements;
        expect(buttons.map((b: { url: string }) => b.url)).toEqual([`${PUBLIC}/tickets/7`, ACK]);
        // the assignee field is its label and one line of value
        const assignee = section.fields.find((f: { text: string }) =>
          f.text.startsWith('*Assignee*'),
        );
        expect(assignee.text.split('\n')).toHaveLength(2);
      });

      it('Teams: people’s text only in TextRuns (no Markdown), each one line; Markdown places hold Stega’s words; links are the two buttons', async () => {
        await send(CHANNELS.teams, alert, teams.url);
        const sent = teams.accepted.at(-1)?.json as any;
        const card = sent.attachments[0].content;
        // what Teams reads as Markdown: TextBlock text, fact titles and values
        const markdown: string[] = [];
        const runs: string[] = [];
        for (const element of card.body) {
          if (element.type === 'TextBlock') markdown.push(element.text);
          if (element.type === 'FactSet')
            for (const fact of element.facts) markdown.push(fact.title, fact.value);
          if (element.type === 'RichTextBlock')
            for (const run of element.inlines) {
              expect(run.type).toBe('TextRun');
              runs.push(run.text);
            }
        }
        for (const text of markdown) {
          expect(text).not.toMatch(/attacker|\[|\]\(|Carla|Carol|Acme|<script/);
        }
        expect(runs).toContain(oneLine(subject));
        expect(runs.some((run) => run.includes('Carla **Dias**'))).toBe(true);
        for (const run of runs) expect(run).not.toMatch(/[\r\n\u2028\u2029\u202e]/);
        expect(card.actions.map((a: { url: string }) => a.url)).toEqual([
          `${PUBLIC}/tickets/7`,
          ACK,
        ]);
        expect(card.fallbackText).not.toMatch(/[\r\n]/);
      });

      it('email: the subject header is one line; the body has one acknowledge line, the real one, and the subject on its own line', async () => {
        const before = smtp.messages.length;
        await send(CHANNELS.email, alert, 'oncall@example.test');
        await eventually(() => smtp.messages.length > before, 'the mail at the sink');
        const raw = smtp.messages.at(-1)?.raw ?? '';
        const mail = await simpleParser(raw);
        expect(mail.subject).toBe(
          `[Stega] Ticket #7 first response SLA breached, escalation level 1: ${oneLine(subject)}`,
        );
        expect(mail.subject).not.toMatch(/[\r\n]/);
        const lines = (mail.text ?? '').split('\n');
        const acknowledge = lines.filter((line) => /acknowledge/i.test(line));
        // the subject's fake line and the assignee's stay inside their own lines
        expect(acknowledge.filter((line) => line.startsWith('Acknowledge'))).toEqual([
          `Acknowledge (stops the escalation): ${ACK}`,
        ]);
        expect(lines[0]).toBe(`Ticket #7: ${oneLine(subject)}`);
        for (const line of lines.filter((l) => l.includes('attacker.example'))) {
          expect(line).toMatch(/^(Ticket #7|Assignee|Requester): /);
        }
      });

      it('PagerDuty: the summary is one line; the links are the ticket and the acknowledge page', async () => {
        await send(CHANNELS.pagerduty, alert, `trigger:x`, ROUTING_KEY);
        const event = pagerDuty.accepted.at(-1)?.json as any;
        expect(event.payload.summary).not.toMatch(/[\r\n\u2028\u2029]/);
        expect(event.payload.summary).toContain(oneLine(subject));
        expect(event.links.map((l: { href: string }) => l.href)).toEqual([
          `${PUBLIC}/tickets/7`,
          ACK,
        ]);
      });

      it('webhook: JSON carries the subject exactly as it was written (data, for the receiver to escape)', async () => {
        const before = hooks.received.length;
        await send(CHANNELS.webhook, alert, hooks.url);
        await eventually(() => hooks.received.length > before, 'the webhook');
        const body = JSON.parse(hooks.received.at(-1)?.body ?? '{}');
        expect(body.data.subject).toBe(subject);
        expect(body.data.acknowledge_url).toBe(ACK);
      });
    });
  }

  it('oneLine: controls and line separators become one space, bidirectional controls go', () => {
    expect(oneLine('a\r\n\r\nb\tc\u0085d\u2028e  f')).toBe('a b c d e  f');
    expect(oneLine('\u202Eabc\u2066d\u2069 ')).toBe('abcd');
    expect(oneLine('plain subject')).toBe('plain subject');
  });

  it('says "1 minute", not "1 minutes", in an escalation email', () => {
    const alert = escalation('Printer down');
    const text = (minutes: number) =>
      alertEmailText(
        { ...alert, payload: { ...alert.payload, delay_minutes: minutes } } as AlertEvent,
        'UTC',
      );
    expect(text(1)).toContain('(1 minute after the breach,');
    expect(text(15)).toContain('(15 minutes after the breach,');
  });
});
