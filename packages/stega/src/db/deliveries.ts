import type { Queryable } from '@stega/pgque';
import type { OutcomeRecord } from '../domain/delivery-outcome.js';

export type AlertType = 'breach' | 'warning' | 'escalation';

/**
 * A delivery's state in the ledger: `pending` (recorded, not yet tried), `sending` (a
 * worker is calling), `retrying` (the last attempt failed; `next_attempt_at` says when
 * the next is), `delivered`, `failed_permanent` (a 4xx, a rejected recipient, or past the
 * retry horizon: `last_error` says which), `scheduled` (a fallback waiting for its
 * deadline), `cancelled` (a fallback whose primaries delivered in time, or acknowledged,
 * met or resolved before its deadline: `last_error` says which; an escalation level's
 * delivery of a chain that stopped; a PagerDuty follow-up with nothing to follow).
 */
export type DeliveryState =
  | 'pending'
  | 'sending'
  | 'retrying'
  | 'delivered'
  | 'failed_permanent'
  | 'scheduled'
  | 'cancelled';

/** One (alert, channel, recipient) delivery as the sla-breach-worker recorded it. */
export interface DeliveryRow {
  id: number;
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  channel: 'in_app' | 'email' | 'webhook';
  recipient: string;
  /** The coarse status of the first API version; `state` has the detail. */
  status: 'pending' | 'delivered' | 'failed';
  state: DeliveryState;
  /** A fallback delivery (the policy's `fallback` channels). */
  fallback: boolean;
  attempts: number;
  last_error: string | null;
  /** The typed outcome of the last attempt (null before one): what the UI switches on. */
  last_outcome: OutcomeRecord | null;
  delivered_at: Date | null;
  delivered_by: string | null;
  batch_id: number | null;
  updated_at: Date;
  /** When the next attempt is due (retrying; scheduled: the fallback's deadline). */
  next_attempt_at: Date | null;
  /** When the first failed attempt was (null when none failed). */
  retrying_since: Date | null;
  /** The circuit of the delivery's endpoint: `open` while it is failing. Null in-app. */
  circuit: 'open' | 'closed' | null;
  /** For a primary delivery: recipients of the alert's fallback deliveries that fired. */
  fell_back_to: string[];
}

const COLUMNS = `d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.status,
  d.attempts, d.last_error, d.last_outcome, d.delivered_at, d.delivered_by, d.batch_id, d.updated_at, d.fallback,
  d.next_attempt_at, d.first_failed_at, d.endpoint, e.state as circuit`;

const FROM = `stega.alert_deliveries d
  left join stega.delivery_endpoints e on e.endpoint = d.endpoint`;
/** Alert rows only: emails to customers are shown on their comments (customer-emails.ts). */
const ALERTS_ONLY = `d.channel <> 'customer_email'`;

function stateOf(status: string): DeliveryState {
  if (status === 'failed') return 'retrying';
  return status as DeliveryState;
}

function legacyStatus(state: DeliveryState): DeliveryRow['status'] {
  if (state === 'delivered') return 'delivered';
  if (state === 'retrying' || state === 'failed_permanent') return 'failed';
  return 'pending';
}

function deliveryOf(row: Record<string, unknown>): DeliveryRow {
  const state = stateOf(String(row.status));
  return {
    id: Number(row.id),
    alert_type: row.alert_type as AlertType,
    alert_id: Number(row.alert_id),
    ticket_id: Number(row.ticket_id),
    channel: row.channel as DeliveryRow['channel'],
    recipient: String(row.recipient),
    status: legacyStatus(state),
    state,
    fallback: Boolean(row.fallback),
    attempts: Number(row.attempts),
    last_error: (row.last_error as string | null) ?? null,
    last_outcome: (row.last_outcome as OutcomeRecord | null) ?? null,
    delivered_at: (row.delivered_at as Date | null) ?? null,
    delivered_by: (row.delivered_by as string | null) ?? null,
    batch_id: row.batch_id === null ? null : Number(row.batch_id),
    updated_at: row.updated_at as Date,
    next_attempt_at:
      state === 'delivered' || state === 'failed_permanent' || state === 'cancelled'
        ? null
        : ((row.next_attempt_at as Date | null) ?? null),
    retrying_since: (row.first_failed_at as Date | null) ?? null,
    circuit:
      row.endpoint === null || row.endpoint === undefined
        ? null
        : ((row.circuit as 'open' | 'closed' | null) ?? 'closed'),
    fell_back_to: [],
  };
}

/** Fills `fell_back_to` of primary rows from the fallback rows of the same alert that fired. */
function withFallbacks(rows: DeliveryRow[]): DeliveryRow[] {
  const fired = new Map<string, string[]>();
  for (const row of rows) {
    if (!row.fallback || row.state === 'scheduled' || row.state === 'cancelled') continue;
    const key = `${row.alert_type}:${row.alert_id}`;
    fired.set(key, [...(fired.get(key) ?? []), `${row.channel}:${row.recipient}`]);
  }
  if (fired.size === 0) return rows;
  return rows.map((row) =>
    row.fallback || row.channel === 'in_app'
      ? row
      : { ...row, fell_back_to: fired.get(`${row.alert_type}:${row.alert_id}`) ?? [] },
  );
}

/** The deliveries of the given alerts, in the order they were first recorded. */
export async function deliveryListForAlerts(
  db: Queryable,
  alertType: AlertType,
  alertIds: number[],
): Promise<DeliveryRow[]> {
  if (alertIds.length === 0) return [];
  const { rows } = await db.query(
    `select ${COLUMNS} from ${FROM}
      where d.alert_type = $1 and d.alert_id = any ($2::bigint[])
      order by d.id`,
    [alertType, alertIds],
  );
  return withFallbacks(rows.map(deliveryOf));
}

export async function deliveryListByTicket(
  db: Queryable,
  ticketId: number,
): Promise<DeliveryRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from ${FROM} where d.ticket_id = $1 and ${ALERTS_ONLY} order by d.id`,
    [ticketId],
  );
  return withFallbacks(rows.map(deliveryOf));
}

/** Deliveries not (yet) delivered, newest alert first: retrying, in flight, failed for good, fallbacks waiting. */
export async function deliveryListOutstanding(
  db: Queryable,
  limit: number,
): Promise<DeliveryRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from ${FROM}
      where d.status not in ('delivered', 'cancelled') and ${ALERTS_ONLY}
      order by d.created_at desc, d.id desc
      limit $1`,
    [limit],
  );
  return withFallbacks(rows.map(deliveryOf));
}

/** An endpoint's circuit, as the sla-breach-workers keep it. */
export interface EndpointRow {
  endpoint: string;
  state: 'open' | 'closed';
  consecutive_failures: number;
  opened_at: Date | null;
  probe_at: Date | null;
  last_error: string | null;
  updated_at: Date;
}

/** Endpoints whose circuit is open or that failed recently, open ones first. */
export async function endpointListTroubled(db: Queryable, limit: number): Promise<EndpointRow[]> {
  const { rows } = await db.query(
    `select endpoint, state, consecutive_failures, opened_at, probe_at, last_error, updated_at
       from stega.delivery_endpoints
      where state = 'open' or consecutive_failures > 0
      order by state = 'open' desc, updated_at desc
      limit $1`,
    [limit],
  );
  return rows.map((row) => ({
    endpoint: String(row.endpoint),
    state: row.state as EndpointRow['state'],
    consecutive_failures: Number(row.consecutive_failures),
    opened_at: (row.opened_at as Date | null) ?? null,
    probe_at: (row.probe_at as Date | null) ?? null,
    last_error: (row.last_error as string | null) ?? null,
    updated_at: row.updated_at as Date,
  }));
}
