import { maskWebhookUrl, teamsChannelSchema } from '../../domain/alert-channels.js';
import type { CallOutcome } from '../../domain/delivery-outcome.js';
import { type AlertFacts, alertFacts } from '../alert-facts.js';
import type { DeliveryChannel } from '../channel.js';
import { postJson } from '../transport/http-post.js';

/**
 * Microsoft Teams workflow webhooks ("When a Teams webhook request is received", as the
 * "Send webhook alerts to a channel" template sets up): Workflows take Adaptive Cards only,
 * as a message whose attachment has contentType application/vnd.microsoft.card.adaptive.
 * The card: a title, the subject, a fact set, the assignee and the requester, the due instant (Teams renders {{DATE}} and
 * {{TIME}} in the reader's zone; the UTC text follows), and Action.OpenUrl buttons to the
 * ticket and, when there is one, to acknowledge. A workflow answers 202 Accepted.
 *
 * Teams reads Markdown in a TextBlock and in a fact's title and value (`[text](url)` is a
 * link, `- ` a list item), so what people wrote (the subject, the assignee's and the
 * requester's names) never goes there: it goes in TextRuns of a RichTextBlock, which Adaptive
 * Cards show as they are, without Markdown. The fact set holds only Stega's own words, and
 * the only links are the two buttons, both Stega's.
 */

/**
 * Version 1.4: the card uses nothing newer than 1.2 (FactSet, TextBlock, RichTextBlock, Action.OpenUrl),
 * and Teams and the workflow's "Post card in a chat or channel" action render 1.4 cards; a
 * card declaring a version newer than a client knows is shown as its fallback text.
 */
export const ADAPTIVE_CARD_VERSION = '1.4';
export const ADAPTIVE_CARD_SCHEMA = 'http://adaptivecards.io/schemas/adaptive-card.json';
export const ADAPTIVE_CARD_CONTENT_TYPE = 'application/vnd.microsoft.card.adaptive';

/** The instant as the Adaptive Card date functions take it: RFC 3339, whole seconds, Z. */
function cardInstant(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : `${at.toISOString().slice(0, 19)}Z`;
}

/** A line of text shown as it is: a RichTextBlock of TextRuns (never Markdown). */
function plainLine(...runs: Record<string, unknown>[]): Record<string, unknown> {
  return { type: 'RichTextBlock', inlines: runs.map((run) => ({ type: 'TextRun', ...run })) };
}

/** `Assignee: Carla Dias <carla@example.test>`, the label bold, the value as it is. */
function personFact(title: string, value: string): Record<string, unknown> {
  return plainLine({ text: `${title}: `, weight: 'Bolder' }, { text: value });
}

export function teamsMessage(facts: AlertFacts): Record<string, unknown> {
  const at = cardInstant(facts.dueAt);
  const actions: Record<string, unknown>[] = [
    { type: 'Action.OpenUrl', title: `Open ticket #${facts.ticketId}`, url: facts.ticketUrl },
  ];
  if (facts.acknowledgeUrl) {
    actions.push({ type: 'Action.OpenUrl', title: 'Acknowledge', url: facts.acknowledgeUrl });
  }
  return {
    type: 'message',
    attachments: [
      {
        contentType: ADAPTIVE_CARD_CONTENT_TYPE,
        contentUrl: null,
        content: {
          $schema: ADAPTIVE_CARD_SCHEMA,
          type: 'AdaptiveCard',
          version: ADAPTIVE_CARD_VERSION,
          fallbackText: `${facts.title}: ${facts.subject} (${facts.timeLeft}, due ${facts.dueUtc})`,
          body: [
            {
              type: 'TextBlock',
              text: facts.title,
              weight: 'Bolder',
              size: 'Medium',
              wrap: true,
              color: facts.overdue ? 'Attention' : 'Warning',
            },
            plainLine({ text: facts.subject }),
            {
              type: 'FactSet',
              facts: [
                { title: 'Target', value: facts.target },
                { title: facts.overdue ? 'Overdue' : 'Time left', value: facts.timeLeft },
                { title: 'Due (UTC)', value: facts.dueUtc },
                { title: 'Priority', value: facts.priority },
              ],
            },
            personFact('Assignee', facts.assignee),
            personFact('Requester', facts.requester),
            {
              type: 'TextBlock',
              text: `Due {{DATE(${at}, SHORT)}} {{TIME(${at})}} (your time)`,
              wrap: true,
              isSubtle: true,
            },
            ...(facts.fallbackNote
              ? [{ type: 'TextBlock', text: facts.fallbackNote, wrap: true, isSubtle: true }]
              : []),
          ],
          actions,
        },
      },
    ],
  };
}

export interface TeamsPost {
  url: string;
  message: Record<string, unknown>;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  allowedNetworks?: readonly string[] | undefined;
}

/** POSTs the card message to the workflow; returns the outcome as postJson does. */
export function postTeams(post: TeamsPost): Promise<CallOutcome> {
  return postJson({
    url: post.url,
    what: 'Teams webhook',
    body: JSON.stringify(post.message),
    headers: { 'content-type': 'application/json', 'user-agent': 'stega-teams/1' },
    timeoutMs: post.timeoutMs,
    signal: post.signal,
    allowedNetworks: post.allowedNetworks,
  });
}

type TeamsTarget = (typeof teamsChannelSchema)['_zod']['output'];

/** The Teams channel: its message to the row's webhook URL (the URL is the secret: masked). */
export const teamsChannel: DeliveryChannel<TeamsTarget, Record<string, unknown>> = {
  name: 'teams',
  target: teamsChannelSchema,
  targets: (set) => set.teams ?? [],
  address: (hook) => ({ recipient: hook.url, secret: null }),
  mask: maskWebhookUrl,
  endpoint: (url) => url,
  timeoutMs: (settings) => settings.webhookTimeoutMs,
  async build({ row, alert, settings, acknowledgeUrl }) {
    return teamsMessage(
      alertFacts(alert, {
        publicUrl: settings.publicUrl,
        now: new Date(),
        acknowledgeUrl: await acknowledgeUrl('chat:teams', { throughChain: true }),
        fallback: row.fallback,
      }),
    );
  },
  send: (message, signal, { row, settings }) =>
    postTeams({
      url: row.recipient,
      message,
      timeoutMs: settings.webhookTimeoutMs,
      signal,
      allowedNetworks: settings.allowedNetworks,
    }),
};
