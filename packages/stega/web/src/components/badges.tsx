import { formatDateTime, label } from '../format.js';
import type { Priority, TicketStatus } from '../types.js';

export function StatusBadge({ status }: { status: TicketStatus }) {
  return <span className={`badge status-${status}`}>{label(status)}</span>;
}

export function PriorityBadge({ priority }: { priority: Priority }) {
  return <span className={`badge priority-${priority}`}>{label(priority)}</span>;
}

/** Breached wins over warned; nothing when the SLA is on track. */
export function SlaBadge({ breached, warned }: { breached: boolean; warned: boolean }) {
  if (breached) return <span className="badge sla-breached">Breached</span>;
  if (warned) return <span className="badge sla-warned">Warned</span>;
  return null;
}

/** A delivery's status and, when it has one, the error of its last attempt. */
export function DeliveryOutcome({
  status,
  lastError,
}: {
  status: 'pending' | 'delivered' | 'failed';
  lastError: string | null | undefined;
}) {
  return (
    <div>
      <DeliveryBadge status={status} />
      {lastError ? <span className="small error-text"> {lastError}</span> : null}
    </div>
  );
}

/** A delivery's status: delivered, pending or failed. */
export function DeliveryBadge({ status }: { status: 'pending' | 'delivered' | 'failed' }) {
  return <span className={`badge delivery-${status}`}>{label(status)}</span>;
}

/** What the API says of a delivery's progress (issue 12). */
export interface DeliveryProgressFields {
  status: 'pending' | 'delivered' | 'failed';
  state:
    | 'pending'
    | 'sending'
    | 'retrying'
    | 'delivered'
    | 'failed_permanent'
    | 'scheduled'
    | 'cancelled';
  fallback: boolean;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  retrying_since: string | null;
  circuit: 'open' | 'closed' | null;
  fell_back_to: string[];
  /** The typed outcome of the last attempt (ticket and outstanding deliveries; issue 22). */
  last_outcome?: LastOutcome | null;
}

/** What the API says the last attempt came to, as fields. */
export interface LastOutcome {
  type: 'delivered' | 'failed' | 'moot' | 'waiting';
  kind?:
    | 'refused'
    | 'http'
    | 'rate_limited'
    | 'timeout'
    | 'network'
    | 'smtp'
    | 'permanent'
    | 'bounced';
  status?: number;
  until?: string | null;
  after_ms?: number | null;
  code?: string | null;
  reply?: number | null;
  dsn_status?: string | null;
}

/** A failed attempt's kind in a word or two, from the outcome's fields (never its text). */
export function failureWords(outcome: LastOutcome): string | null {
  if (outcome.type !== 'failed') return null;
  switch (outcome.kind) {
    case 'refused':
      return 'Refused by policy';
    case 'http':
      return `HTTP ${outcome.status}`;
    case 'rate_limited':
      return outcome.until
        ? `Rate limited until ${formatDateTime(outcome.until)}`
        : `Rate limited (${outcome.status})`;
    case 'timeout':
      return 'Timed out';
    case 'network':
      return outcome.code ? `Network (${outcome.code})` : 'Network';
    case 'smtp':
      return outcome.reply ? `Mail server ${outcome.reply}` : 'Mail error';
    case 'permanent':
      return 'Cannot be sent';
    case 'bounced':
      return outcome.dsn_status ? `Bounced (${outcome.dsn_status})` : 'Bounced';
    default:
      return null;
  }
}

const SERVICE_NAMES: Record<string, string> = {
  slack: 'Slack',
  teams: 'Teams',
  webhook: 'webhook',
};

/**
 * One `fell_back_to` entry (`<channel>:<recipient>`) in words: `email lead@example.com`,
 * `Slack https://hooks.slack.com/…ab12`, `PagerDuty (integration key …5ef9)`.
 */
function fallbackTargetWords(entry: string): string {
  const at = entry.indexOf(':');
  const channel = entry.slice(0, at);
  const recipient = entry.slice(at + 1);
  const page = /^trigger:(…\w{4}):[0-9a-f]+$/.exec(recipient);
  if (channel === 'pagerduty' && page) return `PagerDuty (integration key ${page[1]})`;
  return `${SERVICE_NAMES[channel] ?? channel} ${recipient}`;
}

const STATE_LABELS: Record<DeliveryProgressFields['state'], string> = {
  pending: 'Pending',
  sending: 'Sending',
  retrying: 'Retrying',
  delivered: 'Delivered',
  failed_permanent: 'Failed',
  scheduled: 'Fallback scheduled',
  cancelled: 'Cancelled',
};

/**
 * A delivery's state and its detail: retrying since when and the next try, the endpoint's
 * circuit, the reason of a permanent failure, where it fell back to.
 */
export function DeliveryProgress({ d }: { d: DeliveryProgressFields }) {
  const tone =
    d.state === 'delivered'
      ? 'delivered'
      : d.state === 'retrying' || d.state === 'failed_permanent'
        ? 'failed'
        : 'pending';
  return (
    <div className="delivery-progress" data-state={d.state}>
      <span className={`badge delivery-${tone}`}>{STATE_LABELS[d.state] ?? label(d.state)}</span>
      {d.fallback ? <span className="badge">Fallback</span> : null}
      {d.circuit === 'open' && d.state !== 'delivered' ? (
        <span className="badge delivery-failed">Circuit open</span>
      ) : null}
      {d.last_outcome && d.state !== 'delivered' && failureWords(d.last_outcome) ? (
        <span className="badge" data-failure={d.last_outcome.kind}>
          {failureWords(d.last_outcome)}
        </span>
      ) : null}
      {d.state === 'retrying' && d.retrying_since ? (
        <span className="small"> since {formatDateTime(d.retrying_since)}</span>
      ) : null}
      {(d.state === 'retrying' || d.state === 'scheduled') && d.next_attempt_at ? (
        <span className="small">
          {' '}
          · {d.state === 'scheduled' ? 'due' : 'next try'} {formatDateTime(d.next_attempt_at)}
        </span>
      ) : null}
      {d.last_error && d.state !== 'delivered' ? (
        <span className="small error-text"> {d.last_error}</span>
      ) : null}
      {d.fell_back_to.length > 0 ? (
        <span className="small">
          {' '}
          · fell back to {d.fell_back_to.map(fallbackTargetWords).join(', ')}
        </span>
      ) : null}
    </div>
  );
}
