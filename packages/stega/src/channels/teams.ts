import type { AlertFacts } from './alert-facts.js';
import { postJson } from './webhook.js';

/**
 * Microsoft Teams workflow webhooks ("When a Teams webhook request is received", as the
 * "Send webhook alerts to a channel" template sets up): Workflows take Adaptive Cards only,
 * as a message whose attachment has contentType application/vnd.microsoft.card.adaptive.
 * The card: a title, the subject, a fact set, the due instant (Teams renders {{DATE}} and
 * {{TIME}} in the reader's zone; the UTC text follows), and Action.OpenUrl buttons to the
 * ticket and, when there is one, to acknowledge. A workflow answers 202 Accepted.
 */

/**
 * Version 1.4: the card uses nothing newer than 1.2 (FactSet, TextBlock, Action.OpenUrl),
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
            { type: 'TextBlock', text: facts.subject, wrap: true },
            {
              type: 'FactSet',
              facts: [
                { title: 'Target', value: facts.target },
                { title: facts.overdue ? 'Overdue' : 'Time left', value: facts.timeLeft },
                { title: 'Due (UTC)', value: facts.dueUtc },
                { title: 'Priority', value: facts.priority },
                { title: 'Assignee', value: facts.assignee },
                { title: 'Requester', value: facts.requester },
              ],
            },
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
  allowedNetworks?: readonly string[] | undefined;
}

/** POSTs the card message to the workflow; throws a WebhookError as postJson does. */
export async function postTeams(post: TeamsPost): Promise<void> {
  await postJson({
    url: post.url,
    what: 'Teams webhook',
    body: JSON.stringify(post.message),
    headers: { 'content-type': 'application/json', 'user-agent': 'stega-teams/1' },
    timeoutMs: post.timeoutMs,
    allowedNetworks: post.allowedNetworks,
  });
}
