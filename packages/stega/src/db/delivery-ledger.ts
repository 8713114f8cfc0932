import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { CallOutcome, Failure } from '../domain/delivery-outcome.js';

/**
 * The weekly report's delivery ledger (stega.report_deliveries): one row per (report,
 * channel, recipient) that makes a redelivered event send nothing twice. (The alerts have
 * their own ledger, delivery/ledger/.) No transaction spans the external call: the row is
 * claimed with a token and a lease in short autocommit statements, the call is made, and
 * its outcome is recorded on that claim only.
 */
export interface ReportDeliveryKey {
  reportId: number;
  channel: 'email' | 'webhook';
  recipient: string;
}

export interface DeliveryContext {
  /** Subconsumer (or consumer) name of the process delivering. */
  deliveredBy: string;
  batchId: bigint;
  eventId: bigint;
}

export type DeliveryOutcome = 'delivered' | 'already_delivered';

/** Thrown when another process holds a live claim on the row: retry the event later. */
export class DeliveryClaimedError extends Error {
  constructor(key: ReportDeliveryKey, until: Date) {
    super(
      `report ${key.reportId} ${key.channel} to ${key.recipient} is being delivered by another process (claim until ${until.toISOString()})`,
    );
    this.name = 'DeliveryClaimedError';
  }
}

/** Thrown after a failed call was recorded, so the event is retried; carries the typed failure. */
export class ReportDeliveryFailedError extends Error {
  override name = 'ReportDeliveryFailedError';
  constructor(readonly failure: Failure) {
    super(failure.text);
  }
}

const KEY = 'report_id = $1 and channel = $2 and recipient = $3';
const keyValues = (key: ReportDeliveryKey) => [key.reportId, key.channel, key.recipient];

/**
 * Makes sure the ledger row exists and claims it for `leaseSeconds` (two autocommit
 * statements). Returns the claim token, 'already_delivered', or throws DeliveryClaimedError
 * while another claim's lease runs.
 */
export async function reportDeliveryClaim(
  pool: pg.Pool,
  key: ReportDeliveryKey,
  leaseSeconds: number,
): Promise<string | 'already_delivered'> {
  await pool.query(
    `insert into stega.report_deliveries (report_id, channel, recipient, status)
     values ($1, $2, $3, 'pending')
     on conflict (report_id, channel, recipient) do nothing`,
    keyValues(key),
  );
  const token = randomUUID();
  const claimed = await pool.query(
    `update stega.report_deliveries
        set claim_token = $4, claim_until = now() + make_interval(secs => $5),
            attempts = attempts + 1, updated_at = now()
      where ${KEY} and status <> 'delivered'
        and (claim_token is null or claim_until <= now())
      returning id`,
    [...keyValues(key), token, leaseSeconds],
  );
  if (claimed.rows.length === 1) return token;
  const current = await pool.query(
    `select status, claim_until from stega.report_deliveries where ${KEY}`,
    keyValues(key),
  );
  const row = current.rows[0] as { status: string; claim_until: Date | null } | undefined;
  if (!row || row.status === 'delivered') return 'already_delivered';
  throw new DeliveryClaimedError(key, row.claim_until ?? new Date());
}

/** Records a delivered call on the claim that made it (one autocommit statement). */
export async function reportDeliveryDelivered(
  pool: pg.Pool,
  key: ReportDeliveryKey,
  token: string,
  deliveredBy: string,
): Promise<void> {
  await pool.query(
    `update stega.report_deliveries
        set status = 'delivered', last_error = null, delivered_at = now(), delivered_by = $5,
            claim_token = null, claim_until = null, updated_at = now()
      where ${KEY} and claim_token = $4`,
    [...keyValues(key), token, deliveredBy],
  );
}

/** Records a failed call on the claim that made it and releases the claim. */
export async function reportDeliveryFailed(
  pool: pg.Pool,
  key: ReportDeliveryKey,
  token: string,
  failure: Failure,
): Promise<void> {
  await pool.query(
    `update stega.report_deliveries
        set status = 'failed', last_error = $5, claim_token = null, claim_until = null,
            updated_at = now()
      where ${KEY} and claim_token = $4`,
    [...keyValues(key), token, failure.text.slice(0, 1000)],
  );
}

/**
 * Delivers once in effect: claim (committed), call `send` with no transaction open, record
 * the outcome. A failed outcome is recorded and thrown as a ReportDeliveryFailedError so the
 * caller can nack. A process that dies between the call and the outcome leaves the claim to
 * lapse; the redelivered event then sends again, with the same Message-ID / Idempotency-Key.
 */
export async function deliverOnce(
  pool: pg.Pool,
  key: ReportDeliveryKey,
  context: DeliveryContext,
  leaseSeconds: number,
  send: () => Promise<CallOutcome>,
): Promise<DeliveryOutcome> {
  const claim = await reportDeliveryClaim(pool, key, leaseSeconds);
  if (claim === 'already_delivered') return claim;
  const outcome = await send();
  if (outcome.type === 'failed') {
    await reportDeliveryFailed(pool, key, claim, outcome.failure);
    throw new ReportDeliveryFailedError(outcome.failure);
  }
  await reportDeliveryDelivered(pool, key, claim, context.deliveredBy);
  return 'delivered';
}
