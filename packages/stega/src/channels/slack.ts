import type { AlertFacts } from './alert-facts.js';
import { postJson } from './webhook.js';

/**
 * Slack incoming webhooks: one Block Kit message per alert (a header, a section with the
 * ticket and its facts, and link buttons to the ticket and, when there is one, to acknowledge).
 * `text` is the notification's fallback. Slack answers 200 `ok`; an error answers with a
 * short string in the body (400 invalid_payload, 403 action_prohibited, 404 channel_not_found
 * or no_service, 410 channel_is_archived, 429 rate limited, 500 rollup_error), which the
 * WebhookError's message carries; classifying by status is done by the caller (every 4xx but
 * 408/409/425/429 is permanent, 429 and 5xx are retried).
 */

/** Slack's documented limits that a message built from ticket text could exceed. */
const HEADER_MAX = 150;
const FIELD_MAX = 2000;
const SECTION_MAX = 3000;

/**
 * Text for a mrkdwn field: `&`, `<` and `>` escaped as Slack asks, so a ticket's subject cannot
 * make a link, a mention (`<!channel>`) or a date token of its own.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const clip = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

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
    ['Assignee', slackEscape(facts.assignee)],
    ['Requester', slackEscape(facts.requester)],
  ].map(([name, value]) => ({ type: 'mrkdwn', text: clip(`*${name}*\n${value}`, FIELD_MAX) }));
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
    text: `${facts.title}: ${slackEscape(facts.subject)} (${facts.timeLeft}, due ${facts.dueUtc})`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: clip(facts.title, HEADER_MAX) } },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: clip(`*<${facts.ticketUrl}|${slackEscape(facts.subject)}>*`, SECTION_MAX),
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
  allowedNetworks?: readonly string[] | undefined;
}

/** POSTs the message to the incoming webhook; throws a WebhookError as postJson does. */
export async function postSlack(post: SlackPost): Promise<void> {
  await postJson({
    url: post.url,
    what: 'Slack webhook',
    body: JSON.stringify(post.message),
    headers: { 'content-type': 'application/json', 'user-agent': 'stega-slack/1' },
    timeoutMs: post.timeoutMs,
    allowedNetworks: post.allowedNetworks,
  });
}
