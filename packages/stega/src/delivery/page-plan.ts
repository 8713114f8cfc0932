import type { PagedPerson } from '../db/notification-rules.js';
import type { RuleStep, Urgency } from '../domain/notification-rules.js';
import { holdUntil } from '../domain/quiet-hours.js';
import { type AlertEvent, kindOf } from './alert-kinds.js';
import type { ChannelSettings, DeliveryChannel } from './channel.js';
import { pushRecipient } from './channels/push.js';
import { channelNamed } from './channels/registry.js';
import type { PlannedDelivery } from './ledger/rows.js';

/**
 * How a paged person is reached: each step of their notification rules (their own for the
 * alert's urgency, else their team's default, else the alert kind's `stepsWithoutRules`)
 * becomes ledger rows: one per verified contact method of the step's method (email: also
 * their sign-in address), scheduled for the paged instant plus the step's delay (scaled).
 * `in_app` lands in their inbox as the alert is recorded, whatever its delay. A step whose
 * method has no verified contact (or no channel) plans nothing: an unverified number is
 * never texted. The rows carry the person and the step (`page_agent_id`, `page_step`):
 * a step that fails for good pulls the next one forward (stega.page_step_advance), and the
 * first acknowledgement cancels every step still scheduled. Each step is retried for
 * PAGE_STEP_RETRY_SECONDS at most.
 *
 * Quiet hours: a low-urgency step (a warning) whose instant (the paged instant plus its
 * delay, unscaled) falls in the person's quiet hours, on their wall clock, is held: recorded
 * `scheduled` for the end of the quiet hours (`held_until`, the real instant; the wait is
 * scaled like every delay), to go with the person's other held rows of that method and
 * address as one digest (ledger/digest-gather.ts). High urgency is never held.
 */

/**
 * How long one step is retried before it counts as failed for good and the person's next
 * step goes at once, seconds (scaled like every retry delay): a page must not wait a day
 * behind a provider that is down.
 */
export const PAGE_STEP_RETRY_SECONDS = 120;

/** What every row of the alert shares (plan.ts's base). */
type RowBase = Omit<
  PlannedDelivery,
  'channel' | 'recipient' | 'fallback' | 'endpoint' | 'status' | 'wait_seconds' | 'secret'
>;

export interface PersonPage {
  /** Rows to record for the person's remote steps. */
  planned: PlannedDelivery[];
  /** Whether a step puts the alert in their in-app inbox. */
  inApp: boolean;
}

/** The steps that apply to `person` for an alert of this kind. */
export function stepsOf(alert: AlertEvent, person: PagedPerson | undefined): RuleStep[] {
  if (person?.steps) {
    return person.steps.map((s) => ({ method: s.method, delay_minutes: s.delaySeconds / 60 }));
  }
  return kindOf(alert).stepsWithoutRules;
}

/** The recipient of a step's row: unique per person, method and contact. */
export const pageRecipient = (agentId: number, method: string, contactId: number) =>
  `agent:${agentId}/${method}/${contactId}`;

export function personPage(
  alert: AlertEvent,
  agentId: number,
  person: PagedPerson | undefined,
  base: RowBase,
  settings: {
    channels: Pick<ChannelSettings, 'emailEndpoint' | 'pagerDutyUrl'>;
    timeScale: number;
  },
  /** The person's zone (their own, else their team's, else the instance's), and the paged instant. */
  at: { zone: string; now: number } = { zone: 'UTC', now: Date.now() },
): PersonPage {
  const planned: PlannedDelivery[] = [];
  let inApp = false;
  for (const [index, step] of stepsOf(alert, person).entries()) {
    if (step.method === 'in_app') {
      inApp = true;
      continue;
    }
    const channel = channelNamed(step.method) as DeliveryChannel | undefined;
    if (!channel || !person) continue;
    const addresses: { recipient: string; secret: string | null }[] = [];
    if (step.method === 'email') {
      addresses.push({ recipient: person.email, secret: null });
      for (const c of person.contacts) {
        if (c.method === 'email' && c.address !== person.email) {
          addresses.push({ recipient: c.address, secret: null });
        }
      }
    } else {
      for (const c of person.contacts) {
        if (c.method !== step.method) continue;
        const recipient = pageRecipient(agentId, c.method, c.id);
        if (c.pushKeys) {
          // a push step's circuit is its push service's: the recipient names its host
          addresses.push({
            recipient: pushRecipient(recipient, c.address),
            secret: JSON.stringify({ endpoint: c.address, keys: c.pushKeys }),
          });
        } else {
          addresses.push({ recipient, secret: c.address });
        }
      }
    }
    const stepAt = at.now + step.delay_minutes * 60_000;
    const held = holdUntil(kindOf(alert).urgency, at.zone, person.quiet, stepAt);
    const waitSeconds =
      held === null
        ? step.delay_minutes * 60 * settings.timeScale
        : ((held - at.now) / 1000) * settings.timeScale;
    for (const address of addresses) {
      planned.push({
        ...base,
        channel: channel.name as PlannedDelivery['channel'],
        recipient: address.recipient,
        fallback: false,
        endpoint: channel.endpoint(address.recipient, settings.channels),
        status: waitSeconds > 0 || held !== null ? 'scheduled' : 'sending',
        wait_seconds: waitSeconds,
        secret: address.secret,
        give_up_seconds: Math.min(
          base.give_up_seconds,
          PAGE_STEP_RETRY_SECONDS * settings.timeScale,
        ),
        page_agent_id: agentId,
        page_step: index,
        ...(held === null ? {} : { held_until: new Date(held).toISOString() }),
      });
    }
  }
  return { planned, inApp };
}

export type { Urgency };
