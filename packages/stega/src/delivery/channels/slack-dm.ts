import { slackUserIdSchema } from '../../domain/notification-rules.js';
import { alertFacts } from '../alert-facts.js';
import { kindOf } from '../alert-kinds.js';
import type { DeliveryChannel } from '../channel.js';
import { SLACK_API_ENDPOINT, slackPostMessage } from '../transport/slack-api.js';
import { slackEscape, slackMessage } from './slack.js';

/** The action of the interactive Acknowledge button (http/routes/slack.ts answers it). */
export const SLACK_ACKNOWLEDGE_ACTION = 'acknowledge_page';

type SlackDm = { channel: string; text: string; blocks: Record<string, unknown>[] };

/**
 * A Slack direct message from Stega's Slack app (a paged person's `slack_dm` step) to their
 * linked Slack user id (the row's secret), with `chat.postMessage`: the Slack channel's Block
 * Kit message, whose Acknowledge button is interactive here (its value the ledger row's id):
 * Slack posts the click to `/api/slack/interactions`, checked with the app's signing secret,
 * and it acknowledges as the person it was sent to. Only planned by rules.
 */
export const slackDmChannel: DeliveryChannel<string, SlackDm> = {
  name: 'slack_dm',
  target: slackUserIdSchema,
  targets: () => [],
  address: (user) => ({ recipient: user, secret: user }),
  mask: (recipient) => recipient,
  endpoint: () => SLACK_API_ENDPOINT,
  timeoutMs: (settings) => settings.webhookTimeoutMs,
  async build({ row, alert, settings, digest }) {
    if (digest) {
      const lines = digest.items.map((item) => `• <${item.ticketUrl}|${slackEscape(item.line)}>`);
      const text = `${digest.subject} (until ${digest.heldUntil})`;
      return {
        channel: row.secret ?? '',
        text,
        blocks: [
          { type: 'header', text: { type: 'plain_text', text: digest.subject } },
          { type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } },
        ],
      };
    }
    const facts = alertFacts(alert, { publicUrl: settings.publicUrl, now: new Date() });
    const message = slackMessage(facts);
    const ackable = kindOf(alert).acknowledgeable !== 'never';
    const blocks = message.blocks.map((block) =>
      block.type === 'actions' && ackable
        ? {
            ...block,
            elements: [
              ...((block.elements as Record<string, unknown>[] | undefined) ?? []),
              {
                type: 'button',
                action_id: SLACK_ACKNOWLEDGE_ACTION,
                style: 'primary',
                text: { type: 'plain_text', text: 'Acknowledge' },
                value: String(row.id),
              },
            ],
          }
        : block,
    );
    return { channel: row.secret ?? '', text: message.text, blocks };
  },
  send: (message, _signal, delivery) =>
    slackPostMessage(delivery.settings.slackApp, message, delivery.settings.webhookTimeoutMs),
};
