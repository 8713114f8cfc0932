import { maskWebhookUrl, slackChannelSchema } from '../../domain/alert-channels.js';
import type { CallOutcome } from '../../domain/delivery-outcome.js';
import { type AlertFacts, alertFacts } from '../alert-facts.js';
import type { DeliveryChannel } from '../channel.js';
import { postJson } from '../transport/http-post.js';

/**
 * Slack incoming webhooks: one Block Kit message per alert (a header, a section with the
 * ticket and its facts, and link buttons to the ticket and, when there is one, to acknowledge).
 * `text` is the notification's fallback. Slack answers 200 `ok`; an error answers with a
 * short string in the body (400 invalid_payload, 403 action_prohibited, 404 channel_not_found
 * or no_service, 410 channel_is_archived, 429 rate limited, 500 rollup_error), which the
 * failure's text carries; what the status means is decided by failureVerdict (every 4xx but
 * 408/409/425/429 is permanent, 429 and 5xx are retried).
 */

/** Slack's documented limits that a message built from ticket text could exceed. */
const HEADER_MAX = 150;
const FIELD_MAX = 2000;
const SECTION_MAX = 3000;

/**
 * Text for a mrkdwn field: `&`, `<` and `>` escaped as Slack asks, so a ticket's subject cannot
 * make a link (`<https://…|Acknowledge>`), a mention (`<!channel>`, `<@U123>`) or a date token
 * of its own. The text objects that carry it are `verbatim`, so Slack does not turn a bare
 * URL, a channel name or an `@here` in it into a link or a mention either.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const clip = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** `text` escaped (slackEscape) in at most `max` characters, never cutting an escape in two. */
export function slackEscapeClipped(text: string, max: number): string {
  const escaped = slackEscape(text);
  if (escaped.length <= max) return escaped;
  let out = '';
  for (const char of text) {
    const next = slackEscape(char);
    if (out.length + next.length > max - 1) break;
    out += next;
  }
  return `${out}…`;
}

/**
 * The due instant as Slack's date token: each reader sees it in their own zone; the UTC text
 * is the fallback (and is repeated after it, for copy and for clients that show the fallback).
 */
export function slackDate(iso: string, utc: string): string {
  const seconds = Math.floor(new Date(iso).getTime() / 1000);
  return `<!date^${seconds}^{date_short_pretty} {time}|${utc}>`;
}

export interface SlackMessage {
  text: string;
  blocks: Record<string, unknown>[];
}

export function slackMessage(facts: AlertFacts): SlackMessage {
  const fields = [
    ['Target', facts.target],
    [facts.overdue ? 'Overdue' : 'Time left', facts.timeLeft],
    ['Due', `${slackDate(facts.dueAt, facts.dueUtc)} (${facts.dueUtc})`],
    ['Priority', facts.priority],
    ['Assignee', slackEscapeClipped(facts.assignee, FIELD_MAX - 20)],
    ['Requester', slackEscapeClipped(facts.requester, FIELD_MAX - 20)],
  ].map(([name, value]) => ({ type: 'mrkdwn', text: `*${name}*\n${value}`, verbatim: true }));
  const buttons: Record<string, unknown>[] = [
    {
      type: 'button',
      action_id: 'open_ticket',
      text: { type: 'plain_text', text: `Open ticket #${facts.ticketId}` },
      url: facts.ticketUrl,
    },
  ];
  if (facts.acknowledgeUrl) {
    buttons.push({
      type: 'button',
      action_id: 'acknowledge',
      style: 'primary',
      text: { type: 'plain_text', text: 'Acknowledge' },
      url: facts.acknowledgeUrl,
    });
  }
  return {
    text: `${facts.title}: ${slackEscapeClipped(facts.subject, SECTION_MAX)} (${facts.timeLeft}, due ${facts.dueUtc})`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: clip(facts.title, HEADER_MAX) } },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*<${facts.ticketUrl}|${slackEscapeClipped(facts.subject, SECTION_MAX - facts.ticketUrl.length - 5)}>*`,
          verbatim: true,
        },
        fields,
      },
      ...(facts.fallbackNote
        ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: facts.fallbackNote }] }]
        : []),
      { type: 'actions', elements: buttons },
    ],
  };
}

export interface SlackPost {
  url: string;
  message: SlackMessage;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  allowedNetworks?: readonly string[] | undefined;
}

/** POSTs the message to the incoming webhook; returns the outcome as postJson does. */
export function postSlack(post: SlackPost): Promise<CallOutcome> {
  return postJson({
    url: post.url,
    what: 'Slack webhook',
    body: JSON.stringify(post.message),
    headers: { 'content-type': 'application/json', 'user-agent': 'stega-slack/1' },
    timeoutMs: post.timeoutMs,
    signal: post.signal,
    allowedNetworks: post.allowedNetworks,
  });
}

type SlackTarget = (typeof slackChannelSchema)['_zod']['output'];

/** The Slack channel: its message to the row's webhook URL (the URL is the secret: masked). */
export const slackChannel: DeliveryChannel<SlackTarget, SlackMessage> = {
  name: 'slack',
  target: slackChannelSchema,
  targets: (set) => set.slack ?? [],
  address: (hook) => ({ recipient: hook.url, secret: null }),
  mask: maskWebhookUrl,
  endpoint: (url) => url,
  timeoutMs: (settings) => settings.webhookTimeoutMs,
  async build({ row, alert, settings, acknowledgeUrl }) {
    return slackMessage(
      alertFacts(alert, {
        publicUrl: settings.publicUrl,
        now: new Date(),
        acknowledgeUrl: await acknowledgeUrl('chat:slack', { throughChain: true }),
        fallback: row.fallback,
      }),
    );
  },
  send: (message, signal, { row, settings }) =>
    postSlack({
      url: row.recipient,
      message,
      timeoutMs: settings.webhookTimeoutMs,
      signal,
      allowedNetworks: settings.allowedNetworks,
    }),
};
