import type { Queryable } from '@stega/pgque';
import type { AlertType, ChannelType } from '../../domain/alert-channels.js';

/**
 * The alert delivery ledger (stega.alert_deliveries) as the sla-breach-workers write it:
 * one row per (alert, channel, recipient, fallback), unique, holding the delivery's state
 * and its retry schedule. No statement of the ledger is ever part of a transaction that
 * spans an external call: a worker records (claims) rows, commits, calls, then records
 * outcomes. A claim carries a token and a lease (in next_attempt_at), which its worker's
 * heartbeat renews while the call runs; an outcome only lands on the claim that made it,
 * and a claim whose lease ran out (a worker killed, frozen or cut off) is claimed again by
 * anyone, so the resend carries the same key. One module per statement beside this one.
 */

/** `escalation`: a fired level of an escalation chain (alert_id: its stega.escalation_firings row). */
export type { AlertType };

/**
 * Mail to a customer on the `customer_email` channel: `reply` (alert_id: the public comment),
 * `acknowledgement` (alert_id: the ticket a message opened). Its payload is the message.
 */
export const MAIL_SUBJECTS = ['reply', 'acknowledgement'] as const;
export type MailSubject = (typeof MAIL_SUBJECTS)[number];
/** What a ledger row delivers (its `alert_type`): an alert, or mail to a customer. */
export type LedgerSubject = AlertType | MailSubject;

export function isMailSubject(subject: string): subject is MailSubject {
  return (MAIL_SUBJECTS as readonly string[]).includes(subject);
}
export type AlertChannel = ChannelType;
/** Delivery states; `failed` is the state of rows older than this ledger's retries. */
export type LedgerStatus =
  | 'pending'
  | 'sending'
  | 'retrying'
  | 'delivered'
  | 'failed'
  | 'failed_permanent'
  | 'scheduled'
  | 'cancelled';

/**
 * The liveness session of the claiming worker (see processes/claim-owner.ts); its start
 * time as the server's text, so that it compares exactly.
 */
export interface ClaimOwner {
  pid: number;
  backendStart: string;
}

/** How a worker claims: its token, the lease, and its liveness session. */
export interface Claim {
  token: string;
  leaseSeconds: number;
  owner: ClaimOwner | null;
}

/** One delivery an alert should have, as recorded. */
export interface PlannedDelivery {
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  channel: AlertChannel;
  recipient: string;
  fallback: boolean;
  /** Circuit key: the webhook URL or the SMTP server; null in-app. */
  endpoint: string | null;
  /** `delivered` (in-app, recorded with its alert), `sending` (claimed now), `scheduled` (a fallback). */
  status: 'delivered' | 'sending' | 'scheduled';
  /** For `scheduled`: seconds until the fallback's deadline. */
  wait_seconds: number;
  give_up_seconds: number;
  retry_delays: number[];
  payload: unknown;
  secret: string | null;
  batch_id: string;
  event_id: string;
  /** A paged person's rule step: the person (agent id) and the step's index in their rules. */
  page_agent_id?: number | undefined;
  page_step?: number | undefined;
  /** A low-urgency step held for the person's quiet hours: their end (ISO). */
  held_until?: string | undefined;
}

/** The in-app alert recorded together with its ledger row (once per alert and agent). */
export interface InAppAlert {
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  agent_id: number | null;
  /** The ledger recipient the alert row goes with (`agent:<id>` or `team`). */
  recipient: string;
  message: string;
}

/** A row this worker holds a claim on and must now send. */
export interface ClaimedDelivery {
  id: number;
  alert_type: LedgerSubject;
  alert_id: number;
  ticket_id: number;
  /** `in_app` only for a new in-app row recorded delivered by `deliveryRecord`: nothing to send. */
  channel: AlertChannel;
  recipient: string;
  fallback: boolean;
  endpoint: string | null;
  attempts: number;
  give_up_at: Date | null;
  retry_delays: number[] | null;
  payload: unknown;
  secret: string | null;
  claim_token: string;
  /** The circuit was open: this call is its probe. */
  probe: boolean;
  /** Held for the person's quiet hours until then: its send is a digest (digest-gather.ts). */
  held_until?: Date | null;
}

/** The identity of a ledger row: (alert, channel, recipient, fallback). */
export const deliveryKeyOf = (row: {
  alert_type: string;
  alert_id: number;
  channel: string;
  recipient: string;
  fallback: boolean;
}) => `${row.alert_type}:${row.alert_id}:${row.channel}:${row.fallback}:${row.recipient}`;

/** A claimed row as the statements return it (every column the send needs). */
export function claimedOf(row: Record<string, unknown>, probe = false): ClaimedDelivery {
  return {
    id: Number(row.id),
    alert_type: row.alert_type as LedgerSubject,
    alert_id: Number(row.alert_id),
    ticket_id: Number(row.ticket_id),
    channel: row.channel as ClaimedDelivery['channel'],
    recipient: String(row.recipient),
    fallback: Boolean(row.fallback),
    endpoint: (row.endpoint as string | null) ?? null,
    attempts: Number(row.attempts),
    give_up_at: (row.give_up_at as Date | null) ?? null,
    retry_delays: (row.retry_delays as number[] | null) ?? null,
    payload: row.payload,
    secret: (row.secret as string | null) ?? null,
    claim_token: String(row.claim_token),
    probe,
    held_until: (row.held_until as Date | null | undefined) ?? null,
  };
}

/**
 * The ledger's seam to the database: a Queryable (a pool, or a client in the caller's
 * transaction) that also runs named statements, pg's `query({ name, text, values })`, so
 * that each connection plans a ledger statement once instead of at every call.
 */
export interface LedgerDb extends Queryable {
  query(config: {
    name: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}
