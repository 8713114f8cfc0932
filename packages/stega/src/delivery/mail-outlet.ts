import type { Claim, ClaimedDelivery } from './ledger/rows.js';

/** How a process records an email to a customer so that it sends the email itself. */
export interface MailRecording {
  /** The SMTP server's circuit key (the alert email's). */
  endpoint: string;
  /** A fresh claim: the row is recorded `sending`, held by this process. */
  claim: Claim;
  /** Delays between attempts, seconds (already scaled). */
  retryDelays: number[];
  /** How long it is retried, seconds (already scaled). */
  giveUpSeconds: number;
}

/**
 * What recording an email to a customer needs of the process it runs in (delivery/mail-out.ts
 * is the one there is): how to record it claimed, and how to send it once the transaction that
 * recorded it has committed. Where there is none, the email is recorded due for the retry
 * loops of the sla-breach-workers.
 */
export interface MailOutlet {
  recording(): MailRecording;
  /** Sends a claimed row after its commit; its outcome lands in the ledger. Never throws. */
  send(row: ClaimedDelivery): void;
}
