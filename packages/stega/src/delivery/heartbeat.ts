import type { Logger } from '../log.js';
import { deliveryLeaseRenew } from './ledger/renew.js';
import type { LedgerDb } from './ledger/rows.js';

/** Default of SLA_CLAIM_LEASE_SECONDS: how long a claim holds without its worker's heartbeat. */
export const CLAIM_LEASE_SECONDS = 15;

/**
 * Keeps the claims of the deliveries this worker is sending alive: every third of the lease
 * it renews their leases in one statement, however long a call takes. A worker that is
 * frozen (SIGSTOP), cut off from the database or stopped renews nothing, so its claims lapse
 * one lease after its last heartbeat, even in the middle of a call, and another worker sends
 * them again with the same key. The timer runs only while claims are held, and does not keep
 * the process alive.
 */
export class ClaimHeartbeat {
  private readonly held = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly db: LedgerDb,
    readonly leaseSeconds: number,
    private readonly logger?: Logger,
  ) {}

  /** Holds a claim: its lease is renewed until `release`. */
  hold(claim: { id: number; claim_token: string }): void {
    this.held.set(claim.id, claim.claim_token);
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), (this.leaseSeconds * 1000) / 3);
    this.timer.unref();
  }

  /** Stops renewing a claim (its outcome is recorded, or it is given up). */
  release(claim: { id: number; claim_token: string }): void {
    if (this.held.get(claim.id) === claim.claim_token) this.held.delete(claim.id);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Claims held now. */
  get holding(): number {
    return this.held.size;
  }

  private async beat(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    const claims = [...this.held].map(([id, token]) => ({ id, token }));
    try {
      const renewed = new Set(await deliveryLeaseRenew(this.db, claims, this.leaseSeconds));
      // a claim still held but not renewed has lapsed or been taken over (or its outcome
      // landed a moment ago): renewing it again is pointless
      let lost = 0;
      for (const claim of claims) {
        if (renewed.has(claim.id) || this.held.get(claim.id) !== claim.token) continue;
        this.held.delete(claim.id);
        lost += 1;
      }
      if (lost > 0) {
        this.logger?.info({ lost }, 'claims not renewed: lapsed, taken over or just recorded');
      }
    } catch (error) {
      this.logger?.warn({ err: error }, 'renewing claim leases failed; retrying at the next beat');
    } finally {
      this.renewing = false;
    }
  }
}
