import type { RemoteChannelType } from '../../domain/alert-channels.js';
import type { DeliveryChannel } from '../channel.js';
import { customerEmailChannel } from './customer-email.js';
import { emailChannel } from './email.js';
import { pagerDutyChannel } from './pagerduty.js';
import { pushChannel } from './push.js';
import { slackChannel } from './slack.js';
import { slackDmChannel } from './slack-dm.js';
import { smsChannel } from './sms.js';
import { teamsChannel } from './teams.js';
import { voiceChannel } from './voice.js';
import { webhookChannel } from './webhook.js';

/**
 * Every remote channel, by its ledger name: the one table the wing reads. A new channel is
 * one file beside these, its target schema in domain/alert-channels.ts, and one row here.
 * The order is the order an alert's deliveries are planned in.
 */
export const CHANNELS = {
  email: emailChannel,
  webhook: webhookChannel,
  slack: slackChannel,
  teams: teamsChannel,
  pagerduty: pagerDutyChannel,
  customer_email: customerEmailChannel,
  sms: smsChannel,
  voice: voiceChannel,
  slack_dm: slackDmChannel,
  push: pushChannel,
} satisfies Record<
  RemoteChannelType,
  // biome-ignore lint/suspicious/noExplicitAny: each row has its own target and message types
  DeliveryChannel<any, any>
>;

/** The channel of a ledger row (undefined for `in_app`, which has nothing to send). */
export function channelNamed(name: string): DeliveryChannel | undefined {
  return (CHANNELS as Record<string, DeliveryChannel | undefined>)[name];
}
