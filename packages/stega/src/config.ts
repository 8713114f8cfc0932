import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { PAGERDUTY_EVENTS_URL } from './delivery/channels/pagerduty.js';
import { type DkimSigning, dkimSigningLoad } from './delivery/transport/dkim.js';
import { smtpCredentialsMayTravelPlain } from './delivery/transport/smtp.js';
import { parseAllowedNetworks, urlRefusal } from './delivery/transport/webhook-target.js';

/** A Twilio account and the number it sends from (see Config.twilio). */
export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  /** E.164 number SMS and calls come from, and people text `ACK <code>` to. */
  fromNumber: string;
  /** The REST API's base URL (a test receiver's in tests). */
  apiUrl: string;
}

/** Web Push's VAPID identity as configured (see Config.webPush). */
export interface WebPushConfig {
  /** The VAPID key pair (base64url, P-256); absent: a pair generated once and kept in the database. */
  vapid: { publicKey: string; privateKey: string } | undefined;
  /** The `sub` of the VAPID token (`mailto:` or `https:`); absent: derived (webPushSubjectOf). */
  subject: string | undefined;
  /** Push endpoints may be plain http (a local push service in tests and development). */
  allowHttp: boolean;
}

/** A Slack app's bot token and signing secret (see Config.slackApp). */
export interface SlackAppConfig {
  botToken: string;
  signingSecret: string;
  /** The Web API's base URL, ending in `/` (a test receiver's in tests). */
  apiUrl: string;
}

/**
 * Stega's configuration, parsed once from the environment at the entrypoint.
 * Nothing below the entrypoint reads process.env.
 */
export interface Config {
  /** HTTP port of the web server (PORT, default 3000). */
  port: number;
  /** Interface the web server binds (HOST, default 0.0.0.0). */
  host: string;
  /** DATABASE_URL; when unset, `stega start` runs an embedded PostgreSQL in dataDir. */
  databaseUrl: string | undefined;
  /**
   * Seconds a session may sit idle inside a transaction before PostgreSQL ends it
   * (DATABASE_IDLE_TRANSACTION_SECONDS, default 10; 0: never): db/session-url.ts.
   */
  databaseIdleTransactionSeconds: number;
  /**
   * The passwords `stega migrate` (run as the database's owner) gives the login roles it
   * creates or updates, one per role (STEGA_WEB_DB_PASSWORD for stega_web,
   * STEGA_MAIL_DB_PASSWORD for stega_mail, STEGA_WORKER_DB_PASSWORD for stega_worker,
   * STEGA_TICKER_DB_PASSWORD for stega_ticker), each granted what its processes need
   * (db/app-roles.ts). A role without one takes STEGA_APP_DB_PASSWORD (deprecated: one
   * password shared), else is left as it is.
   */
  appDatabasePasswords: { web?: string; mail?: string; worker?: string; ticker?: string };
  /** The roles that fell back to the shared STEGA_APP_DB_PASSWORD (migrate warns). */
  sharedAppDatabasePassword: string[];
  /** Where the embedded PostgreSQL and dev mail live (STEGA_DATA_DIR, default ./.stega). */
  dataDir: string;
  /**
   * STEGA_ADMIN_TOKEN: an admin API token accepted as `Authorization: Bearer <token>`; at least
   * 32 characters, and not the deploy/.env.example placeholder. Unset: generated (admin-token.ts).
   */
  adminToken: string | undefined;
  /**
   * Failed sign-ins one client address may make per window before every request from it is
   * answered 429 until the window ends (AUTH_FAILURES_MAX, default 10;
   * AUTH_FAILURES_WINDOW_SECONDS, default 60), and wrong passwords one account may be given
   * per window before its sign-ins are answered 429 (AUTH_ACCOUNT_FAILURES_MAX, default 5).
   */
  authFailures: { max: number; accountMax: number; windowSeconds: number };
  /**
   * Password reset mails one account's address may be sent an hour
   * (PASSWORD_RESET_MAILS_PER_HOUR, default 3; 0: no limit); past it a reset request still
   * answers 202 and sends nothing.
   */
  resetMailsPerHour: number;
  /**
   * Verification messages allowed an hour (VERIFICATION_SENDS_PER_AGENT_HOUR, default 10, for
   * one agent's contact methods; VERIFICATION_SENDS_PER_ADDRESS_HOUR, default 5, to one
   * address); 0: no limit.
   */
  verificationLimits: { perAgentHour: number; perAddressHour: number };
  /**
   * Writes one agent or integration token may make per window, each kind counted apart
   * (WRITE_LIMIT_TICKETS, default 60 ticket creations; WRITE_LIMIT_COMMENTS, default 120
   * comments; WRITE_LIMIT_ACKNOWLEDGEMENTS, default 600 acknowledgements; WRITE_LIMIT_CHANGES,
   * default 600 other writes;
   * WRITE_LIMIT_WINDOW_SECONDS, default 60); past it they get 429 with Retry-After
   * until the window ends. 0: that kind is not limited. The configured admin token is not limited.
   */
  writeLimits: {
    tickets: number;
    comments: number;
    acknowledgements: number;
    changes: number;
    windowSeconds: number;
  };
  /**
   * A signed-in browser's session ends after this many minutes unused
   * (SESSION_IDLE_MINUTES, default 480) and this many hours after sign-in whatever its use
   * (SESSION_MAX_HOURS, default 168).
   */
  sessionIdleMinutes: number;
  sessionMaxHours: number;
  /** Single sign-on with OpenID Connect (OIDC_ISSUER_URL and its companions); unset: none. */
  oidc: OidcConfig | undefined;
  /**
   * Which tickets an agent sees (TICKET_VISIBILITY): `team` (default) — the tickets of their
   * teams, those assigned to them and those of no team; `all` — every ticket. Admins,
   * supervisors and integration tokens always see every ticket.
   */
  ticketVisibility: 'team' | 'all';
  /** IANA zone of the instance: weekly report schedule and report periods (STEGA_TIME_ZONE, default UTC). */
  timeZone: string;
  /** SMTP_URL, e.g. smtp://user:pass@host:587; unset: mail is written to dataDir/mail. */
  smtpUrl: string | undefined;
  /**
   * SMTP_ALLOW_PLAINTEXT_AUTH: send SMTP credentials over a plain connection (a local
   * development server without TLS). Default false: an `smtp://user:pass@…` URL requires
   * STARTTLS, and a server without it fails the send before the credentials leave.
   */
  smtpAllowPlaintextAuth: boolean;
  /** Sender address of every email (MAIL_FROM). */
  mailFrom: string;
  /** DKIM signing of outgoing mail (DKIM_SELECTOR, DKIM_PRIVATE_KEY_FILE, DKIM_DOMAINS); unset: unsigned. */
  dkim: DkimSigning | undefined;
  /** Weekly report recipients (REPORT_EMAILS, comma-separated). */
  reportEmails: string[];
  /** Weekly report webhook (REPORT_WEBHOOK_URL) and its HMAC secret (REPORT_WEBHOOK_SECRET). */
  reportWebhookUrl: string | undefined;
  reportWebhookSecret: string | undefined;
  /** Time-out of one webhook call, ms (WEBHOOK_TIMEOUT_MS, default 5000). */
  webhookTimeoutMs: number;
  /**
   * Networks a webhook may reach although they are loopback, private, link-local, unique-local
   * or multicast (WEBHOOK_ALLOWED_NETWORKS, comma-separated CIDRs; default none). Normalised CIDRs.
   */
  webhookAllowedNetworks: string[];
  /**
   * The PagerDuty Events API v2 URL every PagerDuty channel posts to (PAGERDUTY_EVENTS_URL,
   * default https://events.pagerduty.com/v2/enqueue; e.g. https://events.eu.pagerduty.com/v2/enqueue
   * for an EU account). Policies name only routing keys, never a host. Checked like a webhook
   * URL: a private address needs WEBHOOK_ALLOWED_NETWORKS.
   */
  pagerDutyEventsUrl: string;
  /**
   * Twilio, for the SMS and voice methods of people's notification rules (TWILIO_ACCOUNT_SID,
   * TWILIO_AUTH_TOKEN, TWILIO_FROM_NUMBER, all or none; TWILIO_API_URL, default
   * https://api.twilio.com). Absent: SMS and voice steps fail for good (the next step goes).
   */
  twilio: TwilioConfig | undefined;
  /**
   * A Slack app, for the Slack direct-message method of notification rules (SLACK_BOT_TOKEN
   * and SLACK_SIGNING_SECRET, both or none; SLACK_API_URL, default https://slack.com/api/).
   */
  slackApp: SlackAppConfig | undefined;
  /**
   * Web Push, for the push method of notification rules (WEB_PUSH_VAPID_PUBLIC_KEY and
   * WEB_PUSH_VAPID_PRIVATE_KEY, both or none; WEB_PUSH_SUBJECT; WEB_PUSH_ALLOW_HTTP). Without
   * keys a pair is generated at start and kept in the database (stega.server_secrets).
   */
  webPush: WebPushConfig;
  /** How long a silent sla-breach-worker keeps its batch, seconds (SLA_DEAD_INTERVAL_SECONDS, default 120). */
  slaDeadIntervalSeconds: number;
  /**
   * Alerts one sla-breach-worker has in delivery at the same time, across batches (from
   * recording them to recording their first attempts' outcomes), and due retries it sends
   * at the same time (SLA_DELIVERY_CONCURRENCY, default 64).
   */
  slaDeliveryConcurrency: number;
  /**
   * Multiplies every delivery delay: retry delays, the give-up horizon, the circuit's probe
   * interval and fallback deadlines (SLA_RETRY_TIME_SCALE, default 1; tests compress with
   * e.g. 0.02).
   */
  slaRetryTimeScale: number;
  /**
   * How long a worker's claim on a delivery holds without its heartbeat, seconds
   * (SLA_CLAIM_LEASE_SECONDS, default 15; 3 to 3600). A live worker renews the claims of the
   * deliveries it is sending every third of it, however long the call; a frozen, cut-off or
   * stopped worker's claims lapse after it, and another worker sends them with the same key.
   */
  slaClaimLeaseSeconds: number;
  /** Consecutive transient failures that open an endpoint's circuit (SLA_CIRCUIT_FAILURES, default 5). */
  slaCircuitFailures: number;
  /** Seconds an open circuit waits before one probe (SLA_CIRCUIT_PROBE_SECONDS, default 10). */
  slaCircuitProbeSeconds: number;
  /**
   * The longest wait a receiver's `Retry-After` on a 429 or 503 answer is followed for, in
   * seconds (SLA_RETRY_AFTER_MAX_SECONDS, default 3600; 1 to 86,400). Real seconds:
   * SLA_RETRY_TIME_SCALE does not shorten it, and the retry horizon still bounds it.
   */
  slaRetryAfterMaxSeconds: number;
  /** sla-breach-worker child processes started by `stega start` (SLA_WORKERS, default 2). */
  slaWorkers: number;
  /** Share of an SLA target after which a warning is published, for policies without `warning_thresholds` of their own (SLA_WARNING_SHARE, default 0.8; 1 disables). */
  slaWarningShare: number;
  /**
   * STEGA_ACK_SECRET: the key acknowledge links in escalation emails and chat buttons are
   * signed with (HMAC-SHA256), at least 32 characters. Unset: a random key made by the
   * migration and kept in the database (stega.server_secrets), shared by every process.
   * Changing it voids the links already sent.
   */
  ackSecret: string | undefined;
  /**
   * STEGA_TOTP_KEY: the key agents' TOTP secrets are sealed with at rest (AES-256-GCM, key
   * derived by HKDF), at least 32 characters. Unset: a random key the migration keeps in the
   * database (stega.server_secrets), so a dump of the database holds both; set it in
   * production. Secrets sealed under the database's key still open once it is set.
   */
  totpKey: string | undefined;
  /** How long an acknowledge link stays valid, hours (STEGA_ACK_LINK_HOURS, default 72). */
  ackLinkHours: number;
  /**
   * STEGA_FEED_SECRET: the key on-call calendar feed URLs are signed with (HMAC-SHA256), at
   * least 32 characters. Unset: a random key made by the migration and kept in the database
   * (stega.server_secrets). Changing it voids every feed URL given out; renewing one
   * schedule's or agent's feed voids only theirs.
   */
  feedSecret: string | undefined;
  /**
   * The web UI's address as readers reach it, for links in emails and chat messages
   * (STEGA_PUBLIC_URL, e.g. https://help.example.com; default http://localhost:PORT).
   */
  publicUrl: string | undefined;
  /**
   * Which proxies in front of the web process are believed about the client's address
   * (TRUST_PROXY: unset or `false` none, the TCP peer is the client; `true` all; a hop count;
   * or comma-separated addresses and CIDRs), as Fastify's `trustProxy`. The per-address
   * sign-in throttle keys on the address it yields.
   */
  trustProxy: boolean | number | string[];
  /** Events per page of the cooperative split for sla_breach_dispatcher (COOP_PAGE_SIZE, default 50; 0 = whole windows). */
  coopPageSize: number;
  /** Subconsumer name of this process (SUBCONSUMER_NAME, default `${hostname}-${pid}`). */
  subconsumerName: string;
  /** Heartbeat file of a long-running role, read by `stega healthcheck` (STEGA_HEALTH_FILE; unset: none). */
  healthFile: string | undefined;
  /**
   * Port of a worker process's Prometheus endpoint GET /metrics (METRICS_PORT; unset: none).
   * `stega web` serves /metrics on PORT. Under `stega start` and `stega cluster` the
   * worker children take METRICS_PORT, METRICS_PORT+1, … (see childMetricsPort).
   */
  metricsPort: number | undefined;
  /**
   * METRICS_TOKEN: the bearer token Prometheus scrapes GET /metrics with (`stega web`, and the
   * workers' METRICS_PORT). Unset: `stega web` does not serve /metrics (404), and a worker's
   * METRICS_PORT answers without one.
   */
  metricsToken: string | undefined;
  /** Mail in (issue 23): the SMTP listener, IMAP polling and how received mail is filed. */
  inbound: InboundConfig;
  /** pino level (LOG_LEVEL, default info). */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * LOG_FORMAT: `json` (one JSON object per line) or `pretty` (coloured, one line each);
   * unset: `auto`, pretty when stdout is a terminal, JSON otherwise.
   */
  logFormat: 'auto' | 'pretty' | 'json';
}

/**
 * Single sign-on with an OpenID Connect provider (authorization code flow with PKCE): the
 * sign-in page offers "Sign in with <providerName>". The provider redirects back to
 * `STEGA_PUBLIC_URL/api/auth/oidc/callback`, which is why STEGA_PUBLIC_URL is required.
 */
export interface OidcConfig {
  /** OIDC_ISSUER_URL: https, or http on a loopback host (development, tests). */
  issuerUrl: string;
  /** OIDC_CLIENT_ID. */
  clientId: string;
  /** OIDC_CLIENT_SECRET: sent to the provider's token endpoint only; never logged or shown. */
  clientSecret: string;
  /** OIDC_PROVIDER_NAME, shown on the sign-in button (default `single sign-on`). */
  providerName: string;
  /**
   * OIDC_ALLOWED_DOMAINS, lowercased: only a verified address (`email_verified` true) of one of
   * these domains signs in; one without an agent gets one (role agent) at its first sign-in.
   */
  allowedDomains: string[];
  /** OIDC_SCOPES, space-separated (default `openid email profile`); always with `openid`. */
  scopes: string;
  /** OIDC_GROUPS_CLAIM: the claim listing the person's groups; unset: teams are left alone. */
  groupsClaim: string | undefined;
  /**
   * OIDC_GROUP_TEAMS, group → names of teams: at each sign-in the agent is made a member of
   * the teams of their groups, and taken out of the other teams named here (teams named
   * nowhere here are left alone).
   */
  groupTeams: Map<string, string[]>;
}

/** Mail in: `stega mail-in` (also run by `stega start` and `stega cluster`). */
export interface InboundConfig {
  /**
   * Port of the SMTP listener (INBOUND_SMTP_PORT; default 0: no listener; `npm start`,
   * Compose and Kubernetes set 2525). It binds HOST.
   */
  smtpPort: number;
  /** Largest message accepted, bytes (INBOUND_MAX_MESSAGE_BYTES, default 25 MB); 552 past it. */
  maxMessageBytes: number;
  /**
   * PEM certificate and key files (INBOUND_SMTP_TLS_CERT, INBOUND_SMTP_TLS_KEY): STARTTLS is
   * offered when both are set, not otherwise.
   */
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /**
   * INBOUND_SMTP_AUTH=`user:password`: senders must authenticate (PLAIN/LOGIN) first, e.g. a
   * Postfix relay in front. Unset: no AUTH (an MX receives from anyone).
   */
  smtpAuth: { username: string; password: string } | undefined;
  /**
   * INBOUND_SMTP_ALLOW_INSECURE_AUTH: take `smtpAuth` credentials over a plain connection, for
   * a listener on a trusted network (a relay on localhost or a private network). Default
   * false: AUTH without a certificate is a configuration error.
   */
  smtpAllowInsecureAuth: boolean;
  /** SMTP connections served at once (INBOUND_SMTP_MAX_CLIENTS, default 100); 421 past it. */
  smtpMaxClients: number;
  /** New tickets one sender may open by mail per hour (INBOUND_NEW_TICKETS_PER_SENDER_HOUR, default 20). */
  newTicketsPerSenderHour: number;
  /**
   * A reply to a ticket closed more than this many days ago opens a new ticket linked to it
   * (INBOUND_FOLLOW_UP_AFTER_DAYS, default 7); a younger closed or a resolved one reopens.
   */
  followUpAfterDays: number;
  /** A customer's reply moves a `waiting` ticket back to `open` (INBOUND_REOPEN_WAITING, default true). */
  reopenWaiting: boolean;
  /** Attachment bytes kept per ticket (INBOUND_TICKET_ATTACHMENTS_MAX_BYTES, default 100 MB). */
  ticketAttachmentsMaxBytes: number;
  /**
   * "We got your request" emails one mailbox sends per hour at most
   * (INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR, default 1000): forged senders cannot make
   * Stega mail strangers without bound.
   */
  acknowledgementsPerMailboxHour: number;
  /** How often an IMAP mailbox without IDLE is polled, seconds (INBOUND_IMAP_POLL_SECONDS, default 60). */
  imapPollSeconds: number;
  /**
   * The lease of each mail filing slot a mail-in holds, seconds (INBOUND_FILING_LEASE_SECONDS,
   * default 30), renewed every third of it: a mail-in that dies leaves its slots' mail
   * unfiled this long; one that joins or leaves moves slots within a third of it.
   */
  filingLeaseSeconds: number;
}

const intFrom = (name: string, min: number, max: number, fallback: number) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw.trim() === '') return fallback;
      const value = Number(raw);
      if (!Number.isInteger(value) || value < min || value > max) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`,
        });
        return z.NEVER;
      }
      return value;
    })
    .meta({ type: `integer ${min}–${max}`, default: String(fallback) });

/**
 * A URL as an error may print it: its password (between the user's `:` and the last `@`,
 * even when the URL is too malformed to parse) and any `password=` parameter as `***`.
 */
export function urlPasswordMasked(raw: string): string {
  return raw
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:).*@/i, '$1***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***');
}

const urlFrom = (name: string, protocols: string[]) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw.trim() === '') return undefined;
      try {
        const url = new URL(raw);
        if (!protocols.includes(url.protocol)) throw new Error();
        return raw;
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a ${protocols.join(' or ')}// URL, got ${JSON.stringify(urlPasswordMasked(raw))}`,
        });
        return z.NEVER;
      }
    })
    .meta({ type: `${protocols.map((p) => `${p}//`).join(' or ')} URL` });

const trustProxy = z
  .string()
  .optional()
  .transform((raw, ctx): boolean | number | string[] => {
    const value = (raw ?? '').trim();
    if (value === '' || value === 'false') return false;
    if (value === 'true') return true;
    if (/^\d+$/.test(value)) return Number(value) === 0 ? false : Number(value);
    const entries = value.split(',').map((entry) => entry.trim());
    const bad = entries.find((entry) => !ipaddr.isValid(entry) && !isCidr(entry));
    if (bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `TRUST_PROXY must be true, false, a hop count or comma-separated addresses and CIDRs; ${JSON.stringify(bad)} is none of them`,
      });
      return z.NEVER;
    }
    return entries;
  })
  .meta({ type: '`true`, `false`, a hop count, or comma-separated addresses and CIDRs' });

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

const networks = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    try {
      return parseAllowedNetworks(raw ?? '');
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        message: `WEBHOOK_ALLOWED_NETWORKS must be comma-separated CIDRs: ${(error as Error).message}`,
      });
      return z.NEVER;
    }
  })
  .meta({ type: 'comma-separated CIDRs' });

/** The shortest STEGA_ADMIN_TOKEN accepted (`openssl rand -hex 32` makes 64 characters). */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

const adminToken = z
  .string()
  .optional()
  .superRefine((token, ctx) => {
    if (token === undefined || token === '') return;
    const make = 'make one with `openssl rand -hex 32`';
    if (/^change-me/i.test(token.trim())) {
      ctx.addIssue({
        code: 'custom',
        message: `STEGA_ADMIN_TOKEN is still the deploy/.env.example placeholder; ${make}`,
      });
    } else if (token.length < ADMIN_TOKEN_MIN_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        message: `STEGA_ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters (it has ${token.length}); ${make}`,
      });
    }
  })
  .meta({ type: `string of at least ${ADMIN_TOKEN_MIN_LENGTH} characters` });

const metricsToken = z
  .string()
  .optional()
  .refine(
    (s) => s === undefined || s === '' || s.length >= ADMIN_TOKEN_MIN_LENGTH,
    `METRICS_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters (make one with \`openssl rand -hex 32\`)`,
  )
  .meta({ type: `string of at least ${ADMIN_TOKEN_MIN_LENGTH} characters` });

/** `1`/`true`/`yes` or `0`/`false`/`no` (default false). */
const flag = (name: string) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const value = raw?.trim().toLowerCase() ?? '';
      if (value === '' || value === '0' || value === 'false' || value === 'no') return false;
      if (value === '1' || value === 'true' || value === 'yes') return true;
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be 1 or 0 (true or false), got ${JSON.stringify(raw)}`,
      });
      return z.NEVER;
    })
    .meta({ type: '`1` or `0`', default: '0' });

const timeZone = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const zone = raw?.trim() || 'UTC';
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
      return zone;
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: `STEGA_TIME_ZONE must be an IANA time zone, got ${JSON.stringify(raw)}`,
      });
      return z.NEVER;
    }
  })
  .meta({ type: 'IANA time zone' });

const share = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    if (raw === undefined || raw.trim() === '') return 0.8;
    const value = Number(raw);
    if (!(value > 0 && value <= 1)) {
      ctx.addIssue({
        code: 'custom',
        message: `SLA_WARNING_SHARE must be a number in (0, 1], got ${JSON.stringify(raw)}`,
      });
      return z.NEVER;
    }
    return value;
  })
  .meta({ type: 'number in (0, 1]', default: '0.8' });

const scale = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    if (raw === undefined || raw.trim() === '') return 1;
    const value = Number(raw);
    if (!(value > 0 && value <= 1)) {
      ctx.addIssue({
        code: 'custom',
        message: `SLA_RETRY_TIME_SCALE must be a number in (0, 1], got ${JSON.stringify(raw)}`,
      });
      return z.NEVER;
    }
    return value;
  })
  .meta({ type: 'number in (0, 1]', default: '1' });

/**
 * The environment, variable by variable. Each one's `.meta()` is what the configuration
 * reference (docs/configuration.md, written by `npm run docs:config`) says of it:
 * `description` (required: a test fails on a variable without one), `type` (what it
 * accepts; the parsers above set it) and `default` (a value, or what unset means).
 */
export const envSchema = z.object({
  PORT: intFrom('PORT', 0, 65535, 3000).meta({ description: 'HTTP port of `stega web`' }),
  HOST: z.string().optional().meta({
    type: 'interface address',
    default: '0.0.0.0',
    description: 'HTTP interface `stega web` binds',
  }),
  DATABASE_URL: urlFrom('DATABASE_URL', ['postgres:', 'postgresql:']).meta({
    default: '— (embedded)',
    description:
      'PostgreSQL ≥ 14; unset: `stega start` (and `stega cluster`) runs an embedded one in `STEGA_DATA_DIR`',
  }),
  DATABASE_IDLE_TRANSACTION_SECONDS: intFrom('DATABASE_IDLE_TRANSACTION_SECONDS', 0, 3600, 10).meta(
    {
      description:
        "a database session of Stega's left idle inside a transaction this long (a process frozen, stopped or cut off between two statements) is ended by PostgreSQL (`idle_in_transaction_session_timeout`, set in every connection's `options`), so its locks cannot hold up breach detection, mail filing or delivery in the other processes for longer; its own work is then retried. Stega's transactions make no network call, so a live one is never idle that long. A `DATABASE_URL` whose `options` set the timeout keeps its own; 0: never (also for a connection pooler that refuses startup options: then set the timeout on the database roles)",
    },
  ),
  STEGA_DATA_DIR: z.string().optional().meta({
    type: 'path',
    default: '`.stega`',
    description:
      'embedded database and its password (`postgres-password`), development mail, generated admin token',
  }),
  STEGA_ADMIN_TOKEN: adminToken.meta({
    default: 'generated',
    description:
      'admin API token (`Authorization: Bearer …`): at least 32 characters, make one with `openssl rand -hex 32`; the `deploy/.env.example` placeholder (`change-me…`) is refused. Unset: a random one (`stg_` + 32 random bytes) is generated into `STEGA_DATA_DIR/admin-token`, mode 0600',
  }),
  AUTH_FAILURES_MAX: intFrom('AUTH_FAILURES_MAX', 1, 1_000_000, 10).meta({
    description:
      'failed sign-ins (unknown or revoked tokens, wrong passwords) one client address may make per window; past it every request of that address needing a credential gets 429 with `Retry-After` until the window ends',
  }),
  AUTH_FAILURES_WINDOW_SECONDS: intFrom('AUTH_FAILURES_WINDOW_SECONDS', 1, 86_400, 60).meta({
    description: "that window, counted from the address's first failure",
  }),
  AUTH_ACCOUNT_FAILURES_MAX: intFrom('AUTH_ACCOUNT_FAILURES_MAX', 1, 1_000_000, 5).meta({
    description:
      'wrong passwords one account may be given per `AUTH_FAILURES_WINDOW_SECONDS`; past it its sign-ins get 429 until the window ends',
  }),
  PASSWORD_RESET_MAILS_PER_HOUR: intFrom('PASSWORD_RESET_MAILS_PER_HOUR', 0, 1000, 3).meta({
    description:
      "password reset mails one account's address may be sent in an hour (`POST /api/auth/reset-request`), counted in the database; past it a request still answers 202 (as for an unknown address) and sends nothing, so nobody can flood an agent's mailbox. A request while a reset link under 5 minutes old still works sends nothing either. 0: no limit",
  }),
  WRITE_LIMIT_TICKETS: intFrom('WRITE_LIMIT_TICKETS', 0, 1_000_000, 60).meta({
    description:
      'tickets one agent or integration token may create per `WRITE_LIMIT_WINDOW_SECONDS` (`POST /api/tickets`); past it they get 429 with `Retry-After` until the window ends. 0: no limit. The admin token (`STEGA_ADMIN_TOKEN`) is not limited',
  }),
  WRITE_LIMIT_COMMENTS: intFrom('WRITE_LIMIT_COMMENTS', 0, 1_000_000, 120).meta({
    description:
      'comments one agent or integration token may post per `WRITE_LIMIT_WINDOW_SECONDS` (`POST /api/tickets/{id}/comments`), counted apart from tickets; 0: no limit',
  }),
  WRITE_LIMIT_ACKNOWLEDGEMENTS: intFrom('WRITE_LIMIT_ACKNOWLEDGEMENTS', 0, 1_000_000, 600).meta({
    description:
      'acknowledgements one agent or integration token may make per `WRITE_LIMIT_WINDOW_SECONDS` (`POST /api/escalations/{id}/acknowledge`, `POST /api/tickets/{id}/acknowledge`), counted apart; generous, so that a storm can be acknowledged by hand; 0: no limit',
  }),
  WRITE_LIMIT_CHANGES: intFrom('WRITE_LIMIT_CHANGES', 0, 1_000_000, 600).meta({
    default: '600',
    description:
      'every other write one agent or integration token may make per `WRITE_LIMIT_WINDOW_SECONDS` (ticket fields and transitions, customers, schedules, overrides, contact methods, settings), counted apart; 0: no limit',
  }),
  WRITE_LIMIT_WINDOW_SECONDS: intFrom('WRITE_LIMIT_WINDOW_SECONDS', 1, 86_400, 60).meta({
    description:
      "the write limits' window, counted from a principal's first write in it; counted per web process",
  }),
  VERIFICATION_SENDS_PER_AGENT_HOUR: intFrom(
    'VERIFICATION_SENDS_PER_AGENT_HOUR',
    0,
    10_000,
    10,
  ).meta({
    description:
      "verification messages (a code by SMS, call, email or push; a Slack link message) that may go out for one agent's contact methods in an hour, whoever adds or re-sends them; past it adding or re-sending a method gets 429 `STEGA_ERR_TOO_MANY_CODES` with `Retry-After` and nothing is sent. Counted in the database (every web process together). 0: no limit",
  }),
  VERIFICATION_SENDS_PER_ADDRESS_HOUR: intFrom(
    'VERIFICATION_SENDS_PER_ADDRESS_HOUR',
    0,
    10_000,
    5,
  ).meta({
    description:
      'verification messages that may go to one address (a number, an email address, a push endpoint, a Slack user) in an hour, across every agent that adds it: nobody can text, call or mail someone again and again through Stega. 0: no limit',
  }),
  SESSION_IDLE_MINUTES: intFrom('SESSION_IDLE_MINUTES', 5, 10_080, 480).meta({
    description: "a signed-in browser's session ends after this many minutes unused",
  }),
  SESSION_MAX_HOURS: intFrom('SESSION_MAX_HOURS', 1, 2160, 168).meta({
    description:
      "a signed-in browser's session ends this many hours after sign-in, whatever its use",
  }),
  OIDC_ISSUER_URL: urlFrom('OIDC_ISSUER_URL', ['https:', 'http:']).meta({
    default: '— (no single sign-on)',
    description:
      "single sign-on with OpenID Connect: the provider's issuer (its discovery document is `<issuer>/.well-known/openid-configuration`); https, or http on a loopback host. Needs `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET`, `OIDC_ALLOWED_DOMAINS` and `STEGA_PUBLIC_URL`; register `STEGA_PUBLIC_URL/api/auth/oidc/callback` as the client's redirect URI (see [Single sign-on](access.md#single-sign-on-openid-connect))",
  }),
  OIDC_CLIENT_ID: z.string().optional().meta({
    type: 'string',
    description: "Stega's client id at the provider",
  }),
  OIDC_CLIENT_SECRET: z.string().optional().meta({
    type: 'string',
    description:
      "Stega's client secret at the provider (`client_secret_basic`); never logged nor answered by the API",
  }),
  OIDC_PROVIDER_NAME: z.string().max(60).optional().meta({
    type: 'string of at most 60 characters',
    default: '`single sign-on`',
    description: 'the provider as the sign-in page names it: "Sign in with <name>"',
  }),
  OIDC_ALLOWED_DOMAINS: z.string().optional().meta({
    type: 'comma-separated domains',
    description:
      'only a verified address (`email_verified` true) of these domains signs in with the provider; one of no agent gets an agent (role agent) at its first sign-in',
  }),
  OIDC_SCOPES: z.string().optional().meta({
    type: 'space-separated scopes',
    default: '`openid email profile`',
    description:
      'the scopes Stega asks the provider for (`openid` is always added); add the one that brings the groups claim if your provider needs one, e.g. `openid email profile groups`',
  }),
  OIDC_GROUPS_CLAIM: z.string().optional().meta({
    type: 'claim name',
    default: '— (teams are not touched)',
    description:
      'the claim (ID token or userinfo) listing the groups of the person signing in, e.g. `groups`; with `OIDC_GROUP_TEAMS` it sets their team memberships at each sign-in',
  }),
  OIDC_GROUP_TEAMS: z.string().optional().meta({
    type: 'JSON object: group → team name or list of team names',
    description:
      'e.g. `{"support-red":"Red","support-all":["Red","Blue"]}`: at each sign-in the agent joins the teams of their groups and leaves the other teams named here; teams named nowhere here are left alone',
  }),
  TICKET_VISIBILITY: z
    .enum(['team', 'all'], {
      error: (issue) => `TICKET_VISIBILITY must be team or all, got ${JSON.stringify(issue.input)}`,
    })
    .optional()
    .meta({
      type: '`team` or `all`',
      default: '`team`',
      description:
        "which tickets an agent sees: `team` (their teams', those assigned to them, those of no team) or `all`; supervisors, admins and integration tokens see all",
    }),
  STEGA_TIME_ZONE: timeZone.meta({
    default: 'UTC',
    description:
      'IANA zone of the weekly report (Monday 08:00 local) and its periods, and of alert times for readers without a zone (see [Times where the reader lives](concepts.md#times-where-the-reader-lives))',
  }),
  SMTP_URL: urlFrom('SMTP_URL', ['smtp:', 'smtps:']).meta({
    description:
      '`smtp://user:pass@host:port` (STARTTLS required when it has credentials) or `smtps://…` (TLS from the start), sent over a pool of up to 16 connections opened as messages wait (`?maxConnections=3` narrows it); unset: emails are written to `STEGA_DATA_DIR/mail`, each file 0600 in a 0700 folder',
  }),
  SMTP_ALLOW_PLAINTEXT_AUTH: flag('SMTP_ALLOW_PLAINTEXT_AUTH').meta({
    description:
      "`1`: send `SMTP_URL`'s credentials even when the server offers no TLS (a local development server only). Unset: a server that does not offer STARTTLS fails the send before the credentials leave",
  }),
  MAIL_FROM: z.string().optional().meta({
    type: 'email address',
    default: '`Stega <stega@localhost>`',
    description: 'sender of every email',
  }),
  DKIM_SELECTOR: z.string().optional().meta({
    type: 'DNS name',
    description:
      'DKIM selector of outgoing mail: with `DKIM_PRIVATE_KEY_FILE`, each message is signed for its From domain, whose public key is published at `<selector>._domainkey.<domain>` (see [DKIM](mail.md#dkim))',
  }),
  DKIM_PRIVATE_KEY_FILE: z.string().optional().meta({
    type: 'path',
    description:
      'PEM private key (RSA 2048+ or Ed25519) that signs outgoing mail; goes with `DKIM_SELECTOR`',
  }),
  DKIM_DOMAINS: z.string().optional().meta({
    type: 'comma-separated domains',
    default: 'every From domain',
    description:
      'the From domains to sign (those whose DNS holds the key); mail from other domains goes unsigned',
  }),
  REPORT_EMAILS: z.string().optional().meta({
    type: 'comma-separated email addresses',
    description: 'recipients of the weekly report',
  }),
  REPORT_WEBHOOK_URL: urlFrom('REPORT_WEBHOOK_URL', ['http:', 'https:']).meta({
    description:
      'weekly report webhook (see [Webhooks](references/channels.md#webhooks)); checked like a webhook target at start',
  }),
  REPORT_WEBHOOK_SECRET: z.string().optional().meta({
    type: 'string',
    description: "the weekly report webhook's signing secret",
  }),
  WEBHOOK_TIMEOUT_MS: intFrom('WEBHOOK_TIMEOUT_MS', 100, 120_000, 5000).meta({
    description: 'time-out of one webhook call, ms',
  }),
  WEBHOOK_ALLOWED_NETWORKS: networks.meta({
    default: '— (none)',
    description:
      'CIDRs (`10.0.0.0/8,fd00::/8`; a bare address is one host) a webhook may reach although loopback, private, link-local, unique-local or multicast; `--demo` adds `127.0.0.0/8,::1/128`',
  }),
  PAGERDUTY_EVENTS_URL: urlFrom('PAGERDUTY_EVENTS_URL', ['http:', 'https:']).meta({
    default: `\`${PAGERDUTY_EVENTS_URL}\``,
    description:
      'where PagerDuty channels post (`https://events.eu.pagerduty.com/v2/enqueue` for an EU account); checked like a webhook URL at start (see [PagerDuty](references/channels.md#pagerduty-events-api-v2))',
  }),
  TWILIO_ACCOUNT_SID: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'TWILIO_ACCOUNT_SID must be AC followed by 32 hex digits')
    .optional()
    .meta({
      description:
        'the Twilio account SMS and voice steps of notification rules go through (see [On call](on-call.md#twilio)); with TWILIO_AUTH_TOKEN and TWILIO_FROM_NUMBER',
    }),
  TWILIO_AUTH_TOKEN: z
    .string()
    .min(16, 'TWILIO_AUTH_TOKEN must be at least 16 characters')
    .optional()
    .meta({
      description:
        "the account's auth token: authenticates calls to Twilio and checks the `X-Twilio-Signature` of its callbacks",
    }),
  TWILIO_FROM_NUMBER: z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'TWILIO_FROM_NUMBER must be an E.164 number such as +14155550123')
    .optional()
    .meta({
      description:
        'the Twilio number (E.164) texts and calls come from; its messaging webhook is `<STEGA_PUBLIC_URL>/api/twilio/sms`',
    }),
  TWILIO_API_URL: urlFrom('TWILIO_API_URL', ['http:', 'https:']).meta({
    default: '`https://api.twilio.com`',
    description:
      "Twilio's REST API base URL (a local receiver's in tests); checked like a webhook URL at start",
  }),
  SLACK_BOT_TOKEN: z
    .string()
    .regex(/^xoxb-[A-Za-z0-9-]+$/, 'SLACK_BOT_TOKEN must be a bot token (xoxb-…)')
    .optional()
    .meta({
      description:
        "the Slack app's bot token (scope `chat:write`), for Slack direct messages of notification rules (see [On call](on-call.md#slack-app)); with SLACK_SIGNING_SECRET",
    }),
  SLACK_SIGNING_SECRET: z
    .string()
    .min(16, 'SLACK_SIGNING_SECRET must be at least 16 characters')
    .optional()
    .meta({
      description:
        "the Slack app's signing secret: its interactive requests (`<STEGA_PUBLIC_URL>/api/slack/interactions`) are checked with it",
    }),
  SLACK_API_URL: urlFrom('SLACK_API_URL', ['http:', 'https:']).meta({
    default: '`https://slack.com/api/`',
    description:
      "Slack's Web API base URL (a local receiver's in tests); checked like a webhook URL at start",
  }),
  WEB_PUSH_VAPID_PUBLIC_KEY: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z0-9_-]{87}$/,
      'WEB_PUSH_VAPID_PUBLIC_KEY must be a P-256 public key in base64url (87 characters, as `npx web-push generate-vapid-keys` prints it)',
    )
    .optional()
    .meta({
      description:
        "the VAPID public key browsers subscribe with (the application server key of web push; see [On call](on-call.md#web-push)); with WEB_PUSH_VAPID_PRIVATE_KEY. Unset: a key pair generated at the first start and kept in `stega.server_secrets`. Changing it voids every browser's subscription (each registers again)",
    }),
  WEB_PUSH_VAPID_PRIVATE_KEY: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z0-9_-]{43}$/,
      'WEB_PUSH_VAPID_PRIVATE_KEY must be a P-256 private key in base64url (43 characters)',
    )
    .optional()
    .meta({
      type: 'string (secret)',
      description:
        'the VAPID private key push messages are signed with; with WEB_PUSH_VAPID_PUBLIC_KEY',
    }),
  WEB_PUSH_SUBJECT: z
    .string()
    .trim()
    .regex(
      /^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/,
      'WEB_PUSH_SUBJECT must be a mailto: address or an https: URL',
    )
    .optional()
    .meta({
      default: '`STEGA_PUBLIC_URL` when https, else `mailto:` the MAIL_FROM address',
      description:
        'the contact push services see in the VAPID token (`mailto:oncall@example.com` or an https URL): whom they write to when pushes misbehave',
    }),
  WEB_PUSH_ALLOW_HTTP: flag('WEB_PUSH_ALLOW_HTTP').meta({
    description:
      'accept push subscriptions whose endpoint is plain http (a local push service in development and tests); browsers only give https endpoints. A private address still needs WEBHOOK_ALLOWED_NETWORKS',
  }),
  SLA_DEAD_INTERVAL_SECONDS: intFrom('SLA_DEAD_INTERVAL_SECONDS', 1, 86_400, 120).meta({
    description: "a silent sla-breach-worker's batch is taken over after this",
  }),
  SLA_DELIVERY_CONCURRENCY: intFrom('SLA_DELIVERY_CONCURRENCY', 1, 1000, 64).meta({
    description:
      "alerts one sla-breach-worker has in delivery at once, across batches: from recording an alert's deliveries to recording its first attempts' outcomes (each alert's channels in parallel); a batch is acked once its alerts are recorded, so the next one is received while calls are in flight. Also the retries it sends at once. (Issue 12 proposed 16; at 50 ms per call that caps a worker at 16 / 0.05 s = 320 alerts/s, below its 500/s target)",
  }),
  SLA_RETRY_TIME_SCALE: scale.meta({
    description:
      'multiplies retry delays, the retry horizon, the probe interval and fallback deadlines (tests compress them, e.g. 0.02)',
  }),
  SLA_CLAIM_LEASE_SECONDS: intFrom('SLA_CLAIM_LEASE_SECONDS', 3, 3600, 15).meta({
    description:
      "seconds a claim on a delivery holds without its worker's heartbeat (renewed every third of it while the call runs); a frozen or cut-off worker's deliveries are sent by another after it",
  }),
  SLA_CIRCUIT_FAILURES: intFrom('SLA_CIRCUIT_FAILURES', 1, 1000, 5).meta({
    description: "transient failures in a row that open an endpoint's circuit",
  }),
  SLA_CIRCUIT_PROBE_SECONDS: intFrom('SLA_CIRCUIT_PROBE_SECONDS', 1, 3600, 10).meta({
    description: 'an open circuit lets one delivery through as a probe this often',
  }),
  SLA_RETRY_AFTER_MAX_SECONDS: intFrom('SLA_RETRY_AFTER_MAX_SECONDS', 1, 86_400, 3600).meta({
    description:
      "the longest wait a receiver's `Retry-After` on a 429 or 503 is followed for (real seconds, `SLA_RETRY_TIME_SCALE` does not apply); a longer one waits this long, and never past the retry horizon",
  }),
  SLA_WORKERS: intFrom('SLA_WORKERS', 0, 64, 2).meta({
    description:
      'sla-breach-worker processes started by `stega start` (and `stega cluster` without `--sla-workers`)',
  }),
  SLA_WARNING_SHARE: share.meta({
    description:
      'the default pre-breach warning: share of an SLA target after which `ticket.sla_warning` is published, for policies without `warning_thresholds` of their own (1 disables)',
  }),
  COOP_PAGE_SIZE: intFrom('COOP_PAGE_SIZE', 0, 100_000, 50).meta({
    description:
      'alerts per page of the cooperative split (`stega migrate` applies it); 0: whole tick windows',
  }),
  STEGA_TOTP_KEY: z
    .string()
    .optional()
    .refine(
      (s) => s === undefined || s === '' || s.length >= 32,
      'STEGA_TOTP_KEY must be at least 32 characters (make one with `openssl rand -hex 32`)',
    )
    .refine(
      (s) => !s?.startsWith('change-me'),
      'STEGA_TOTP_KEY is still the deploy/.env.example placeholder: make one with `openssl rand -hex 32`',
    )
    .meta({
      type: 'string of at least 32 characters',
      default: '— (a random key kept in the database)',
      description:
        "key agents' TOTP secrets are sealed with at rest (AES-256-GCM, key derived with HKDF-SHA256); make one with `openssl rand -hex 32`; set it in production (compose requires it). Unset: a random key the migration keeps in `stega.server_secrets`, so a dump of the database holds both. Secrets sealed under that key still open after it is set; changing it afterwards locks out every second factor sealed under the old one (reset them: `DELETE /api/agents/{id}/second-factor`)",
    }),
  STEGA_FEED_SECRET: z
    .string()
    .optional()
    .refine(
      (s) => s === undefined || s === '' || s.length >= 32,
      'STEGA_FEED_SECRET must be at least 32 characters (make one with `openssl rand -hex 32`)',
    )
    .meta({
      type: 'string of at least 32 characters',
      default: '— (a random key kept in the database)',
      description:
        'key on-call calendar feed URLs are signed with (HMAC-SHA256). Unset: a random key the migration keeps in `stega.server_secrets`. Changing it voids every feed URL given out (see [On-call schedules](schedules.md#calendar-feeds))',
    }),
  STEGA_ACK_SECRET: z
    .string()
    .optional()
    .refine(
      (s) => s === undefined || s === '' || s.length >= 32,
      'STEGA_ACK_SECRET must be at least 32 characters (make one with `openssl rand -hex 32`)',
    )
    .meta({
      type: 'string of at least 32 characters',
      default: '— (a random key kept in the database)',
      description:
        'key acknowledge links are signed with (HMAC-SHA256); make one with `openssl rand -hex 32`. Unset: a random key the migration keeps in `stega.server_secrets`, shared by every process. Changing it voids links already sent (see [Escalations](concepts.md#escalations-and-acknowledgement))',
    }),
  STEGA_ACK_LINK_HOURS: intFrom('STEGA_ACK_LINK_HOURS', 1, 24 * 90, 72).meta({
    description: 'how long an acknowledge link stays valid, hours',
  }),
  STEGA_PUBLIC_URL: urlFrom('STEGA_PUBLIC_URL', ['http:', 'https:']).meta({
    default: '`http://localhost:PORT`',
    description:
      "the web UI's address as readers reach it, for the ticket and acknowledge links in emails, webhooks and chat messages",
  }),
  TRUST_PROXY: trustProxy.meta({
    default: '`false`',
    description:
      "which proxies in front of the web process to believe about the client's address (`X-Forwarded-For`, and `X-Forwarded-Proto`/`-Host`): `true` any, a hop count (`1`: the nearest one), or comma-separated addresses and CIDRs (`10.0.0.0/8,127.0.0.1`), as Fastify's `trustProxy`. Unset, the TCP peer is the client, and behind an ingress or load balancer every client shares the proxy's address in the per-address sign-in throttle: set it there (see [Operations](operations.md)), never where clients reach the process directly, since they could then name any address",
  }),
  SUBCONSUMER_NAME: z
    .string()
    .optional()
    .refine(
      (s) => s === undefined || /^[^.\s]+$/.test(s),
      'SUBCONSUMER_NAME must be non-empty and contain no dot or space',
    )
    .meta({
      type: 'name without dots or spaces',
      default: '`hostname-pid`',
      description:
        "this sla-breach-worker's member name (never shared: `start` and `cluster` drop it for their children)",
    }),
  STEGA_HEALTH_FILE: z.string().optional().meta({
    type: 'path',
    default: '— (image: `/tmp/stega-health.json`)',
    description:
      'heartbeat file a long-running role rewrites every 10 s; read by `stega healthcheck`',
  }),
  METRICS_PORT: intFrom('METRICS_PORT', 1, 65535, 0).meta({
    default: '— (none)',
    description:
      "a worker process's Prometheus endpoint `GET /metrics` on this port (`stega web` serves `/metrics` on `PORT`); under `stega start`/`cluster` the worker children take `METRICS_PORT`, `+1`, … in start order",
  }),
  METRICS_TOKEN: metricsToken.meta({
    default: '— (`stega web` does not serve `/metrics`)',
    description:
      "the bearer token Prometheus scrapes `GET /metrics` with (`Authorization: Bearer …`, Prometheus' `authorization` setting): on `stega web` and on the workers' `METRICS_PORT`; make one with `openssl rand -hex 32`. Unset: `stega web` answers `/metrics` with 404, and a worker's `METRICS_PORT` answers anyone who reaches it",
  }),
  INBOUND_SMTP_PORT: intFrom('INBOUND_SMTP_PORT', 0, 65535, 0).meta({
    default: '0 (none; `npm start`, Compose, Kubernetes: 2525)',
    description: "port of `stega mail-in`'s SMTP listener (see [Mail](mail.md))",
  }),
  INBOUND_MAX_MESSAGE_BYTES: intFrom(
    'INBOUND_MAX_MESSAGE_BYTES',
    1024,
    1024 ** 3,
    25 * 1024 * 1024,
  ).meta({
    default: '26214400',
    description: 'largest message taken in (answered 552 past it)',
  }),
  INBOUND_SMTP_TLS_CERT: z.string().optional().meta({
    type: 'path',
    description:
      'PEM certificate file: the listener offers STARTTLS when it and `INBOUND_SMTP_TLS_KEY` are set',
  }),
  INBOUND_SMTP_TLS_KEY: z.string().optional().meta({
    type: 'path',
    description: 'PEM key file for `INBOUND_SMTP_TLS_CERT`',
  }),
  INBOUND_SMTP_AUTH: z
    .string()
    .optional()
    .refine(
      (s) => s === undefined || s === '' || /^[^:]+:.+$/.test(s),
      'INBOUND_SMTP_AUTH must be user:password',
    )
    .meta({
      type: '`user:password`',
      description:
        'senders must authenticate with these first (a relay in front); needs `INBOUND_SMTP_TLS_CERT` and `INBOUND_SMTP_TLS_KEY` (AUTH only after STARTTLS), or `INBOUND_SMTP_ALLOW_INSECURE_AUTH`',
    }),
  INBOUND_SMTP_ALLOW_INSECURE_AUTH: flag('INBOUND_SMTP_ALLOW_INSECURE_AUTH').meta({
    default: 'false',
    description:
      '`true`: take `INBOUND_SMTP_AUTH` credentials over a plain connection, without a certificate; only for a listener on a trusted network (a relay on localhost or a private network). Unset: `INBOUND_SMTP_AUTH` without `INBOUND_SMTP_TLS_CERT` is a configuration error',
  }),
  INBOUND_SMTP_MAX_CLIENTS: intFrom('INBOUND_SMTP_MAX_CLIENTS', 1, 100_000, 100).meta({
    default: '100',
    description:
      'SMTP connections the listener serves at once (per mail-in process); one more is answered `421` and the sender tries again later',
  }),
  INBOUND_NEW_TICKETS_PER_SENDER_HOUR: intFrom(
    'INBOUND_NEW_TICKETS_PER_SENDER_HOUR',
    1,
    100_000,
    20,
  ).meta({
    default: '20',
    description:
      'new tickets one sender may open by mail per hour (stops mail loops); past it their new threads wait in the quarantine, where an admin may retry them',
  }),
  INBOUND_FOLLOW_UP_AFTER_DAYS: intFrom('INBOUND_FOLLOW_UP_AFTER_DAYS', 0, 3650, 7).meta({
    default: '7',
    description:
      'a reply to a ticket closed longer ago starts a new ticket linked to it; a younger one reopens it',
  }),
  INBOUND_REOPEN_WAITING: z.enum(['true', 'false']).optional().meta({
    default: 'true',
    description: "a customer's emailed reply moves a `waiting` ticket back to `open`",
  }),
  INBOUND_TICKET_ATTACHMENTS_MAX_BYTES: intFrom(
    'INBOUND_TICKET_ATTACHMENTS_MAX_BYTES',
    0,
    1024 ** 4,
    100 * 1024 * 1024,
  ).meta({
    default: '104857600',
    description: 'received attachment bytes kept per ticket',
  }),
  INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR: intFrom(
    'INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR',
    0,
    1_000_000,
    1000,
  ).meta({
    default: '1000',
    description:
      'acknowledgements ("we got your request") one mailbox sends per hour at most; past it new tickets get none (the From address is unauthenticated: Stega is no mail cannon for whoever rotates victim addresses); 0: none',
  }),
  INBOUND_IMAP_POLL_SECONDS: intFrom('INBOUND_IMAP_POLL_SECONDS', 1, 86_400, 60).meta({
    default: '60',
    description: 'how often an IMAP mailbox is read when no IDLE news comes',
  }),
  INBOUND_FILING_LEASE_SECONDS: intFrom('INBOUND_FILING_LEASE_SECONDS', 2, 3600, 30).meta({
    default: '30',
    description:
      "lease of each of the 16 mail filing slots a `stega mail-in` holds, renewed every third of it: the mail of a dead mail-in's slots waits this long before the others take them over; a mail-in that joins or leaves moves slots within a third of it (see [Mail](mail.md#filing-in-order))",
  }),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .optional()
    .meta({
      default: 'info',
      description:
        'pino level; each HTTP request is logged at debug (at warn when it took 1 s or more, at error when it failed with a 5xx)',
    }),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional().meta({
    default: 'auto',
    description:
      '`json` (one JSON object per line) or `pretty` (coloured, one line each, by pino-pretty); unset: pretty when stdout is a terminal, JSON otherwise',
  }),
  STEGA_WEB_DB_PASSWORD: z.string().optional().meta({
    type: 'string',
    description:
      'for `stega migrate`: the password of the login role `stega_web` (`stega web`, `stega jobs`), which it creates or updates and grants what those processes need (see [Database roles](operations.md#database-roles)); compose requires it (URL-safe)',
  }),
  STEGA_MAIL_DB_PASSWORD: z.string().optional().meta({
    type: 'string',
    description:
      'for `stega migrate`: the password of the login role `stega_mail` (`stega mail-in`); compose requires it (URL-safe)',
  }),
  STEGA_WORKER_DB_PASSWORD: z.string().optional().meta({
    type: 'string',
    description:
      'for `stega migrate`: the password of the login role `stega_worker` (`stega notification-worker`, `stega sla-breach-worker`); compose requires it (URL-safe)',
  }),
  STEGA_TICKER_DB_PASSWORD: z.string().optional().meta({
    type: 'string',
    description:
      'for `stega migrate`: the password of the login role `stega_ticker` (`stega ticker`); compose requires it (URL-safe)',
  }),
  STEGA_APP_DB_PASSWORD: z.string().optional().meta({
    type: 'string',
    description:
      'deprecated: for `stega migrate`, the password of every role above not given its own (one password shared; migrate warns). Unset with none of the four: migrate creates no roles',
  }),
});

/** Each role's own password, else the shared STEGA_APP_DB_PASSWORD (noting which fell back). */
function appDatabasePasswordsOf(
  e: Partial<
    Record<
      | 'STEGA_APP_DB_PASSWORD'
      | 'STEGA_WEB_DB_PASSWORD'
      | 'STEGA_MAIL_DB_PASSWORD'
      | 'STEGA_WORKER_DB_PASSWORD'
      | 'STEGA_TICKER_DB_PASSWORD',
      string
    >
  >,
): Pick<Config, 'appDatabasePasswords' | 'sharedAppDatabasePassword'> {
  const shared = e.STEGA_APP_DB_PASSWORD || undefined;
  const passwords: Config['appDatabasePasswords'] = {};
  const sharing: string[] = [];
  for (const role of ['web', 'mail', 'worker', 'ticker'] as const) {
    const own = e[`STEGA_${role.toUpperCase() as Uppercase<typeof role>}_DB_PASSWORD`] || undefined;
    const password = own ?? shared;
    if (password !== undefined) passwords[role] = password;
    if (own === undefined && shared !== undefined) sharing.push(`stega_${role}`);
  }
  return { appDatabasePasswords: passwords, sharedAppDatabasePassword: sharing };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses and validates the environment; throws a ConfigError listing every bad variable. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? '');
      return `  - ${name && !issue.message.includes(name) ? `${name}: ` : ''}${issue.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const emails = (e.REPORT_EMAILS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const badEmail = emails.find((address) => !/^[^@\s]+@[^@\s]+$/.test(address));
  if (badEmail)
    throw new ConfigError(
      `invalid configuration:\n  - REPORT_EMAILS has an invalid address: ${JSON.stringify(badEmail)}`,
    );
  const reportHookProblem =
    e.REPORT_WEBHOOK_URL && urlRefusal(new URL(e.REPORT_WEBHOOK_URL), e.WEBHOOK_ALLOWED_NETWORKS);
  if (reportHookProblem)
    throw new ConfigError(
      `invalid configuration:\n  - REPORT_WEBHOOK_URL ${reportHookProblem.startsWith('must') ? reportHookProblem : `is refused: ${reportHookProblem}`}`,
    );
  if (
    e.SMTP_URL &&
    !e.SMTP_ALLOW_PLAINTEXT_AUTH &&
    smtpCredentialsMayTravelPlain(new URL(e.SMTP_URL)) &&
    new URL(e.SMTP_URL).searchParams.get('ignoreTLS') === 'true'
  )
    throw new ConfigError(
      `invalid configuration:\n  - SMTP_URL has credentials and ignoreTLS=true: they would travel unencrypted (${urlPasswordMasked(e.SMTP_URL)}); drop ignoreTLS, or set SMTP_ALLOW_PLAINTEXT_AUTH=1 for a local development server`,
    );
  const pagerDutyEventsUrl = e.PAGERDUTY_EVENTS_URL ?? PAGERDUTY_EVENTS_URL;
  const pagerDutyProblem = urlRefusal(new URL(pagerDutyEventsUrl), e.WEBHOOK_ALLOWED_NETWORKS);
  if (Boolean(e.INBOUND_SMTP_TLS_CERT?.trim()) !== Boolean(e.INBOUND_SMTP_TLS_KEY?.trim()))
    throw new ConfigError(
      'invalid configuration:\n  - INBOUND_SMTP_TLS_CERT and INBOUND_SMTP_TLS_KEY go together: set both or neither',
    );
  if (
    e.INBOUND_SMTP_AUTH &&
    !e.INBOUND_SMTP_TLS_CERT?.trim() &&
    !e.INBOUND_SMTP_ALLOW_INSECURE_AUTH
  )
    throw new ConfigError(
      "invalid configuration:\n  - INBOUND_SMTP_AUTH is set without a certificate: the relay's password would travel in clear text; set INBOUND_SMTP_TLS_CERT and INBOUND_SMTP_TLS_KEY (AUTH then only after STARTTLS), or set INBOUND_SMTP_ALLOW_INSECURE_AUTH=true when the listener sits on a trusted network (a relay on localhost or a private network)",
    );
  const oidc = oidcOf(e);
  const dkim = dkimSigningLoad({
    selector: e.DKIM_SELECTOR,
    keyFile: e.DKIM_PRIVATE_KEY_FILE && path.resolve(cwd, e.DKIM_PRIVATE_KEY_FILE.trim()),
    domains: e.DKIM_DOMAINS,
  });
  if ('problem' in dkim) throw new ConfigError(`invalid configuration:\n  - ${dkim.problem}`);
  if (pagerDutyProblem)
    throw new ConfigError(
      `invalid configuration:\n  - PAGERDUTY_EVENTS_URL ${pagerDutyProblem.startsWith('must') ? pagerDutyProblem : `is refused: ${pagerDutyProblem}`}`,
    );
  return {
    port: e.PORT,
    host: e.HOST?.trim() || '0.0.0.0',
    databaseUrl: e.DATABASE_URL,
    databaseIdleTransactionSeconds: e.DATABASE_IDLE_TRANSACTION_SECONDS,
    ...appDatabasePasswordsOf(e),
    dataDir: path.resolve(cwd, e.STEGA_DATA_DIR?.trim() || '.stega'),
    adminToken: e.STEGA_ADMIN_TOKEN || undefined,
    authFailures: {
      max: e.AUTH_FAILURES_MAX,
      accountMax: e.AUTH_ACCOUNT_FAILURES_MAX,
      windowSeconds: e.AUTH_FAILURES_WINDOW_SECONDS,
    },
    resetMailsPerHour: e.PASSWORD_RESET_MAILS_PER_HOUR,
    verificationLimits: {
      perAgentHour: e.VERIFICATION_SENDS_PER_AGENT_HOUR,
      perAddressHour: e.VERIFICATION_SENDS_PER_ADDRESS_HOUR,
    },
    writeLimits: {
      tickets: e.WRITE_LIMIT_TICKETS,
      comments: e.WRITE_LIMIT_COMMENTS,
      acknowledgements: e.WRITE_LIMIT_ACKNOWLEDGEMENTS,
      changes: e.WRITE_LIMIT_CHANGES,
      windowSeconds: e.WRITE_LIMIT_WINDOW_SECONDS,
    },
    sessionIdleMinutes: e.SESSION_IDLE_MINUTES,
    sessionMaxHours: e.SESSION_MAX_HOURS,
    oidc,
    ticketVisibility: e.TICKET_VISIBILITY ?? 'team',
    timeZone: e.STEGA_TIME_ZONE,
    smtpUrl: e.SMTP_URL,
    smtpAllowPlaintextAuth: e.SMTP_ALLOW_PLAINTEXT_AUTH,
    mailFrom: e.MAIL_FROM?.trim() || 'Stega <stega@localhost>',
    dkim: dkim.signing,
    reportEmails: emails,
    reportWebhookUrl: e.REPORT_WEBHOOK_URL,
    reportWebhookSecret: e.REPORT_WEBHOOK_SECRET || undefined,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowedNetworks: e.WEBHOOK_ALLOWED_NETWORKS,
    pagerDutyEventsUrl,
    twilio: twilioOf(e),
    slackApp: slackAppOf(e),
    webPush: webPushOf(e),
    slaDeadIntervalSeconds: e.SLA_DEAD_INTERVAL_SECONDS,
    slaDeliveryConcurrency: e.SLA_DELIVERY_CONCURRENCY,
    slaRetryTimeScale: e.SLA_RETRY_TIME_SCALE,
    slaClaimLeaseSeconds: e.SLA_CLAIM_LEASE_SECONDS,
    slaCircuitFailures: e.SLA_CIRCUIT_FAILURES,
    slaCircuitProbeSeconds: e.SLA_CIRCUIT_PROBE_SECONDS,
    slaRetryAfterMaxSeconds: e.SLA_RETRY_AFTER_MAX_SECONDS,
    slaWorkers: e.SLA_WORKERS,
    slaWarningShare: e.SLA_WARNING_SHARE,
    ackSecret: e.STEGA_ACK_SECRET || undefined,
    totpKey: e.STEGA_TOTP_KEY || undefined,
    feedSecret: e.STEGA_FEED_SECRET || undefined,
    ackLinkHours: e.STEGA_ACK_LINK_HOURS,
    publicUrl: e.STEGA_PUBLIC_URL?.replace(/\/+$/, ''),
    trustProxy: e.TRUST_PROXY,
    coopPageSize: e.COOP_PAGE_SIZE,
    subconsumerName: e.SUBCONSUMER_NAME || defaultSubconsumerName(),
    healthFile: e.STEGA_HEALTH_FILE?.trim()
      ? path.resolve(cwd, e.STEGA_HEALTH_FILE.trim())
      : undefined,
    metricsPort: e.METRICS_PORT === 0 ? undefined : e.METRICS_PORT,
    metricsToken: e.METRICS_TOKEN || undefined,
    inbound: inboundOf(e, cwd),
    logLevel: e.LOG_LEVEL ?? 'info',
    logFormat: e.LOG_FORMAT ?? 'auto',
  };
}

/** Web Push's settings: the key pair both or none; @throws ConfigError naming what is missing. */
function webPushOf(e: z.infer<typeof envSchema>): WebPushConfig {
  const publicKey = e.WEB_PUSH_VAPID_PUBLIC_KEY;
  const privateKey = e.WEB_PUSH_VAPID_PRIVATE_KEY;
  if (Boolean(publicKey) !== Boolean(privateKey)) {
    throw new ConfigError(
      `invalid configuration:\n  - ${publicKey ? 'WEB_PUSH_VAPID_PRIVATE_KEY' : 'WEB_PUSH_VAPID_PUBLIC_KEY'} must be set with the other`,
    );
  }
  return {
    vapid: publicKey && privateKey ? { publicKey, privateKey } : undefined,
    subject: e.WEB_PUSH_SUBJECT || undefined,
    allowHttp: e.WEB_PUSH_ALLOW_HTTP,
  };
}

/** The Slack app's settings, both or none; @throws ConfigError naming what is missing or wrong. */
function slackAppOf(e: z.infer<typeof envSchema>): SlackAppConfig | undefined {
  if (!e.SLACK_BOT_TOKEN && !e.SLACK_SIGNING_SECRET) return undefined;
  if (!e.SLACK_BOT_TOKEN || !e.SLACK_SIGNING_SECRET) {
    throw new ConfigError(
      `invalid configuration:\n  - ${e.SLACK_BOT_TOKEN ? 'SLACK_SIGNING_SECRET' : 'SLACK_BOT_TOKEN'} must be set with the other`,
    );
  }
  const apiUrl = `${(e.SLACK_API_URL ?? 'https://slack.com/api/').replace(/\/+$/, '')}/`;
  const problem = urlRefusal(new URL(apiUrl), e.WEBHOOK_ALLOWED_NETWORKS);
  if (problem) {
    throw new ConfigError(`invalid configuration:\n  - SLACK_API_URL is refused: ${problem}`);
  }
  return { botToken: e.SLACK_BOT_TOKEN, signingSecret: e.SLACK_SIGNING_SECRET, apiUrl };
}

/** The Twilio settings, all or none; @throws ConfigError naming what is missing or wrong. */
function twilioOf(e: z.infer<typeof envSchema>): TwilioConfig | undefined {
  const given = {
    TWILIO_ACCOUNT_SID: e.TWILIO_ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: e.TWILIO_AUTH_TOKEN,
    TWILIO_FROM_NUMBER: e.TWILIO_FROM_NUMBER,
  };
  const missing = Object.entries(given).filter(([, value]) => !value);
  if (missing.length === 3) return undefined;
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid configuration:\n  - ${missing.map(([name]) => name).join(', ')} must be set with the other TWILIO_ variables`,
    );
  }
  const apiUrl = (e.TWILIO_API_URL ?? 'https://api.twilio.com').replace(/\/+$/, '');
  const problem = urlRefusal(new URL(apiUrl), e.WEBHOOK_ALLOWED_NETWORKS);
  if (problem) {
    throw new ConfigError(`invalid configuration:\n  - TWILIO_API_URL is refused: ${problem}`);
  }
  return {
    accountSid: given.TWILIO_ACCOUNT_SID as string,
    authToken: given.TWILIO_AUTH_TOKEN as string,
    fromNumber: given.TWILIO_FROM_NUMBER as string,
    apiUrl,
  };
}

/** The single sign-on settings, all or none; @throws ConfigError naming what is missing or wrong. */
function oidcOf(e: z.infer<typeof envSchema>): OidcConfig | undefined {
  const fail = (problem: string) => new ConfigError(`invalid configuration:\n  - ${problem}`);
  const issuer = e.OIDC_ISSUER_URL;
  const others = {
    OIDC_CLIENT_ID: e.OIDC_CLIENT_ID,
    OIDC_CLIENT_SECRET: e.OIDC_CLIENT_SECRET,
    OIDC_PROVIDER_NAME: e.OIDC_PROVIDER_NAME,
    OIDC_ALLOWED_DOMAINS: e.OIDC_ALLOWED_DOMAINS,
    OIDC_SCOPES: e.OIDC_SCOPES,
    OIDC_GROUPS_CLAIM: e.OIDC_GROUPS_CLAIM,
    OIDC_GROUP_TEAMS: e.OIDC_GROUP_TEAMS,
  };
  if (!issuer) {
    const stray = Object.entries(others).find(([, value]) => value?.trim());
    if (stray) throw fail(`${stray[0]} is set but OIDC_ISSUER_URL is not: set both or neither`);
    return undefined;
  }
  const url = new URL(issuer);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol === 'http:' && !loopback) {
    throw fail('OIDC_ISSUER_URL must be an https:// URL (http:// only on a loopback host)');
  }
  for (const name of ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_ALLOWED_DOMAINS'] as const) {
    if (!others[name]?.trim()) throw fail(`${name} is required with OIDC_ISSUER_URL`);
  }
  if (!e.STEGA_PUBLIC_URL) {
    throw fail(
      'STEGA_PUBLIC_URL is required with OIDC_ISSUER_URL: the provider redirects back to STEGA_PUBLIC_URL/api/auth/oidc/callback',
    );
  }
  const allowedDomains = (e.OIDC_ALLOWED_DOMAINS ?? '')
    .split(',')
    .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
    .filter(Boolean);
  const badDomain = allowedDomains.find((d) => !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(d));
  if (badDomain) {
    throw fail(`OIDC_ALLOWED_DOMAINS has an invalid domain: ${JSON.stringify(badDomain)}`);
  }
  const groupsClaim = e.OIDC_GROUPS_CLAIM?.trim() || undefined;
  const groupTeams = new Map<string, string[]>();
  if (e.OIDC_GROUP_TEAMS?.trim()) {
    if (!groupsClaim) throw fail('OIDC_GROUP_TEAMS needs OIDC_GROUPS_CLAIM');
    let parsed: unknown;
    try {
      parsed = JSON.parse(e.OIDC_GROUP_TEAMS);
    } catch {
      parsed = undefined;
    }
    const shape =
      'OIDC_GROUP_TEAMS must be a JSON object of group → team name or list of team names, e.g. {"support-red":"Red"}';
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw fail(shape);
    for (const [group, teams] of Object.entries(parsed)) {
      const names = [teams].flat();
      if (names.length === 0 || names.some((n) => typeof n !== 'string' || !n.trim())) {
        throw fail(`${shape}; group ${JSON.stringify(group)} has no team name`);
      }
      groupTeams.set(
        group,
        names.map((n) => (n as string).trim()),
      );
    }
  }
  return {
    issuerUrl: issuer,
    clientId: (e.OIDC_CLIENT_ID ?? '').trim(),
    clientSecret: e.OIDC_CLIENT_SECRET ?? '',
    providerName: e.OIDC_PROVIDER_NAME?.trim() || 'single sign-on',
    allowedDomains,
    scopes: [...new Set(['openid', ...(e.OIDC_SCOPES ?? 'email profile').split(/\s+/)])]
      .filter(Boolean)
      .join(' '),
    groupsClaim,
    groupTeams,
  };
}

function inboundOf(e: z.infer<typeof envSchema>, cwd: string): InboundConfig {
  const file = (value: string | undefined) =>
    value?.trim() ? path.resolve(cwd, value.trim()) : undefined;
  const auth = e.INBOUND_SMTP_AUTH || undefined;
  const colon = auth?.indexOf(':') ?? -1;
  return {
    smtpPort: e.INBOUND_SMTP_PORT,
    maxMessageBytes: e.INBOUND_MAX_MESSAGE_BYTES,
    tlsCertFile: file(e.INBOUND_SMTP_TLS_CERT),
    tlsKeyFile: file(e.INBOUND_SMTP_TLS_KEY),
    smtpAuth: auth
      ? { username: auth.slice(0, colon), password: auth.slice(colon + 1) }
      : undefined,
    smtpAllowInsecureAuth: e.INBOUND_SMTP_ALLOW_INSECURE_AUTH,
    smtpMaxClients: e.INBOUND_SMTP_MAX_CLIENTS,
    newTicketsPerSenderHour: e.INBOUND_NEW_TICKETS_PER_SENDER_HOUR,
    followUpAfterDays: e.INBOUND_FOLLOW_UP_AFTER_DAYS,
    reopenWaiting: e.INBOUND_REOPEN_WAITING !== 'false',
    ticketAttachmentsMaxBytes: e.INBOUND_TICKET_ATTACHMENTS_MAX_BYTES,
    acknowledgementsPerMailboxHour: e.INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR,
    imapPollSeconds: e.INBOUND_IMAP_POLL_SECONDS,
    filingLeaseSeconds: e.INBOUND_FILING_LEASE_SECONDS,
  };
}

/** `${hostname}-${pid}`, with the dots of a qualified host name replaced (members may not contain dots). */
export function defaultSubconsumerName(): string {
  return `${os.hostname().replace(/[.\s]/g, '-')}-${process.pid}`;
}
