import { maskWebhookUrl } from '../domain/index.js';
import type { Actor } from './context.js';

/**
 * What a viewer may see of the secrets in delivery records. Webhook URLs are often secrets
 * themselves (chat incoming-webhook URLs carry their key in the path), so only admins see
 * them in full; everyone else, and an unknown viewer, sees maskWebhookUrl's form.
 */
export function seesWebhookUrls(viewer: Actor | undefined): boolean {
  return viewer?.role === 'admin';
}

/** A delivery's recipient as `viewer` may see it (webhook, Slack, Teams URLs masked for non-admins). */
export function recipientFor(
  channel: string,
  recipient: string,
  viewer: Actor | undefined,
): string {
  // Slack and Teams URLs are their secret; PagerDuty recipients never hold the key (…last 4)
  return (channel === 'webhook' || channel === 'slack' || channel === 'teams') &&
    !seesWebhookUrls(viewer)
    ? maskWebhookUrl(recipient)
    : recipient;
}

/** An error text as `viewer` may see it: every http(s) URL in it masked for non-admins. */
export function errorTextFor(text: string | null, viewer: Actor | undefined): string | null {
  if (text === null || seesWebhookUrls(viewer)) return text;
  return text.replace(/https?:\/\/[^\s"'<>]+/g, (url) => maskWebhookUrl(url));
}

/** A delivery's `fell_back_to` (`channel:recipient` entries) as `viewer` may see it. */
export function fellBackToFor(entries: string[], viewer: Actor | undefined): string[] {
  return entries.map((entry) => {
    const at = entry.indexOf(':');
    const channel = entry.slice(0, at);
    return `${channel}:${recipientFor(channel, entry.slice(at + 1), viewer)}`;
  });
}
