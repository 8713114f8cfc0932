import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Config } from '../config.js';
import { DEFAULT_GIVE_UP_AFTER_HOURS, DEFAULT_RETRY_DELAYS_SECONDS } from '../domain/index.js';
import type { Logger } from '../log.js';
import { Attempts } from './attempt.js';
import { PAGERDUTY_EVENTS_URL } from './channels/pagerduty.js';
import { CLAIM_LEASE_SECONDS, ClaimHeartbeat } from './heartbeat.js';
import { InFlight } from './in-flight.js';
import type { ClaimedDelivery } from './ledger/rows.js';
import type { MailOutlet, MailRecording } from './mail-outlet.js';
import { OutcomeWriter } from './outcome-writer.js';
import { type EmailSender, emailEndpointOf } from './transport/smtp.js';

export interface MailOutDeps {
  pool: pg.Pool;
  email: EmailSender;
  /** The email channel's circuit key: the SMTP server (no credentials), or `mail-dir`. */
  emailEndpoint: string;
  /** Base of the email's time-out (WEBHOOK_TIMEOUT_MS; an email gets twice it, at least 10 s). */
  webhookTimeoutMs: number;
  /** Recorded as `delivered_by`: this process's name. */
  deliveredBy: string;
  /** Multiplies retry delays, the give-up horizon and the probe interval (SLA_RETRY_TIME_SCALE). */
  timeScale: number;
  circuitFailures: number;
  circuitProbeSeconds: number;
  /** How long a claim holds without this process's heartbeat, seconds (SLA_CLAIM_LEASE_SECONDS). */
  leaseSeconds?: number;
  logger?: Logger;
}

/**
 * Emails to customers from the process that recorded them (the web process for a public
 * reply, mail-in for an acknowledgement): the row is recorded claimed by this process in the
 * transaction that makes the reply, and `send` makes the first attempt once it committed,
 * through the wing's one attempt path (attempt.ts: the channel, the typed outcome, the
 * circuit). A failed attempt is left `retrying` for the sla-breach-workers' retry loops; if
 * this process dies before the outcome is recorded, the claim lapses after its lease and a
 * retry loop sends the same message (same Message-ID).
 */
export class MailOut implements MailOutlet {
  private readonly attempts: Attempts;
  private readonly heartbeat: ClaimHeartbeat;
  private readonly leaseSeconds: number;
  private readonly inFlight = new InFlight();

  constructor(private readonly deps: MailOutDeps) {
    this.leaseSeconds = deps.leaseSeconds ?? CLAIM_LEASE_SECONDS;
    this.heartbeat = new ClaimHeartbeat(deps.pool, this.leaseSeconds, deps.logger);
    this.attempts = new Attempts({
      db: deps.pool,
      settings: {
        publicUrl: '',
        timeZone: 'UTC',
        webhookTimeoutMs: deps.webhookTimeoutMs,
        allowedNetworks: [],
        email: deps.email,
        emailEndpoint: deps.emailEndpoint,
        pagerDutyUrl: PAGERDUTY_EVENTS_URL,
      },
      heartbeat: this.heartbeat,
      writer: new OutcomeWriter({
        db: deps.pool,
        deliveredBy: deps.deliveredBy,
        circuitFailures: deps.circuitFailures,
        probeSeconds: deps.circuitProbeSeconds * deps.timeScale,
        logger: deps.logger,
      }),
      timeScale: deps.timeScale,
      logger: deps.logger,
    });
  }

  recording(): MailRecording {
    const scale = this.deps.timeScale;
    return {
      endpoint: this.deps.emailEndpoint,
      claim: { token: randomUUID(), leaseSeconds: this.leaseSeconds, owner: null },
      retryDelays: DEFAULT_RETRY_DELAYS_SECONDS.map((seconds) => seconds * scale),
      giveUpSeconds: DEFAULT_GIVE_UP_AFTER_HOURS * 3600 * scale,
    };
  }

  send(row: ClaimedDelivery): void {
    // attempt() never throws
    this.inFlight.track(this.attempts.attempt(row));
  }

  /** Resolves when every attempt started has its outcome recorded. */
  async drain(): Promise<void> {
    await this.inFlight.drain();
  }
}

/** The MailOut of a process, from its configuration (the SMTP server, retries, circuits). */
export function mailOutFromConfig(
  config: Config,
  pool: pg.Pool,
  email: EmailSender,
  logger: Logger,
): MailOut {
  return new MailOut({
    pool,
    email,
    emailEndpoint: emailEndpointOf(config.smtpUrl),
    webhookTimeoutMs: config.webhookTimeoutMs,
    deliveredBy: config.subconsumerName,
    timeScale: config.slaRetryTimeScale,
    circuitFailures: config.slaCircuitFailures,
    circuitProbeSeconds: config.slaCircuitProbeSeconds,
    leaseSeconds: config.slaClaimLeaseSeconds,
    logger,
  });
}
