import type { EscalationRow } from '../db/escalations.js';
import { zonedTimeText } from '../delivery/alert-text.js';

/**
 * The small server-rendered pages behind an acknowledge link (no web UI, no sign-in: the
 * signed token is the credential). The confirmation page's button POSTs the token.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)} · Stega</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
button{font-size:1rem;padding:.6rem 1.2rem;cursor:pointer}.muted{color:#555}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/** An instant in `zone` with its offset, as alert emails write it. */
const when = (at: Date | null | undefined, zone: string) =>
  at ? zonedTimeText(at.toISOString(), zone) : '';

function about(chain: EscalationRow, zone: string): string {
  const fired = chain.firings.at(-1);
  return `<p>Ticket <a href="/tickets/${chain.ticket_id}">#${chain.ticket_id}</a>: the ${escapeHtml(
    chain.kind.replace(/_/g, ' '),
  )} target was due at ${escapeHtml(when(chain.due_at, zone))}.${
    fired
      ? ` Escalation level ${fired.level} fired at ${escapeHtml(when(fired.fired_at, zone))}.`
      : ''
  }</p>`;
}

function state(chain: EscalationRow, zone: string): string {
  if (chain.stop_reason === 'acknowledged') {
    return `<p>Already acknowledged by ${escapeHtml(chain.acknowledged_by ?? 'someone')} at ${escapeHtml(when(chain.acknowledged_at, zone))}.</p>`;
  }
  const why: Record<string, string> = {
    sla_met: 'the SLA target was met (a reply was sent)',
    resolved: 'the ticket was resolved',
    waiting: 'the ticket is waiting on the customer',
    rescheduled: 'its due time moved',
  };
  return `<p>This escalation has stopped: ${escapeHtml(why[chain.stop_reason ?? ''] ?? 'it ended')}.</p>`;
}

export const acknowledgePage = {
  confirm(chain: EscalationRow, token: string, zone: string): string {
    if (chain.stopped_at)
      return page('Nothing to acknowledge', about(chain, zone) + state(chain, zone));
    return page(
      'Acknowledge this breach?',
      `${about(chain, zone)}<p>Acknowledging stops the escalation: no further level is notified.</p>
<form method="post" action="/acknowledge"><input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">Acknowledge</button></form>`,
    );
  },
  done(chain: EscalationRow, changed: boolean, zone: string): string {
    return changed
      ? page('Acknowledged', `${about(chain, zone)}<p>Thank you: the escalation stops here.</p>`)
      : page('Nothing to acknowledge', about(chain, zone) + state(chain, zone));
  },
  refused(message: string): string {
    return page('This link cannot be used', `<p>${escapeHtml(message)}</p>`);
  },
};
