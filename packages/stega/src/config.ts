import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { PAGERDUTY_EVENTS_URL } from './channels/pagerduty.js';
import { parseAllowedNetworks, urlRefusal } from './channels/webhook-target.js';

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
   * STEGA_APP_DB_PASSWORD: when set, `stega migrate` (run as the database's owner) creates
   * or updates the login roles stega_web, stega_worker and stega_ticker with this password
   * and grants them what their processes need (db/app-roles.ts). Unset: no roles.
   */
  appDatabasePassword: string | undefined;
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
   * AUTH_FAILURES_WINDOW_SECONDS, default 60).
   */
  authFailures: { max: number; windowSeconds: number };
  /** IANA zone of the instance: weekly report schedule and report periods (STEGA_TIME_ZONE, default UTC). */
  timeZone: string;
  /** SMTP_URL, e.g. smtp://user:pass@host:587; unset: mail is written to dataDir/mail. */
  smtpUrl: string | undefined;
  /** Sender address of every email (MAIL_FROM). */
  mailFrom: string;
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
  /** How long an acknowledge link stays valid, hours (STEGA_ACK_LINK_HOURS, default 72). */
  ackLinkHours: number;
  /**
   * The web UI's address as readers reach it, for links in emails and chat messages
   * (STEGA_PUBLIC_URL, e.g. https://help.example.com; default http://localhost:PORT).
   */
  publicUrl: string | undefined;
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
  /** pino level (LOG_LEVEL, default info). */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * LOG_FORMAT: `json` (one JSON object per line) or `pretty` (coloured, one line each);
   * unset: `auto`, pretty when stdout is a terminal, JSON otherwise.
   */
  logFormat: 'auto' | 'pretty' | 'json';
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
    });

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
          message: `${name} must be a ${protocols.join(' or ')}// URL, got ${JSON.stringify(raw)}`,
        });
        return z.NEVER;
      }
    });

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
  });

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
  });

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
  });

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
  });

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
  });

const envSchema = z.object({
  PORT: intFrom('PORT', 0, 65535, 3000),
  HOST: z.string().optional(),
  DATABASE_URL: urlFrom('DATABASE_URL', ['postgres:', 'postgresql:']),
  STEGA_DATA_DIR: z.string().optional(),
  STEGA_ADMIN_TOKEN: adminToken,
  AUTH_FAILURES_MAX: intFrom('AUTH_FAILURES_MAX', 1, 1_000_000, 10),
  AUTH_FAILURES_WINDOW_SECONDS: intFrom('AUTH_FAILURES_WINDOW_SECONDS', 1, 86_400, 60),
  STEGA_TIME_ZONE: timeZone,
  SMTP_URL: urlFrom('SMTP_URL', ['smtp:', 'smtps:']),
  MAIL_FROM: z.string().optional(),
  REPORT_EMAILS: z.string().optional(),
  REPORT_WEBHOOK_URL: urlFrom('REPORT_WEBHOOK_URL', ['http:', 'https:']),
  REPORT_WEBHOOK_SECRET: z.string().optional(),
  WEBHOOK_TIMEOUT_MS: intFrom('WEBHOOK_TIMEOUT_MS', 100, 120_000, 5000),
  WEBHOOK_ALLOWED_NETWORKS: networks,
  PAGERDUTY_EVENTS_URL: urlFrom('PAGERDUTY_EVENTS_URL', ['http:', 'https:']),
  SLA_DEAD_INTERVAL_SECONDS: intFrom('SLA_DEAD_INTERVAL_SECONDS', 1, 86_400, 120),
  SLA_DELIVERY_CONCURRENCY: intFrom('SLA_DELIVERY_CONCURRENCY', 1, 1000, 64),
  SLA_RETRY_TIME_SCALE: scale,
  SLA_CIRCUIT_FAILURES: intFrom('SLA_CIRCUIT_FAILURES', 1, 1000, 5),
  SLA_CIRCUIT_PROBE_SECONDS: intFrom('SLA_CIRCUIT_PROBE_SECONDS', 1, 3600, 10),
  SLA_RETRY_AFTER_MAX_SECONDS: intFrom('SLA_RETRY_AFTER_MAX_SECONDS', 1, 86_400, 3600),
  SLA_WORKERS: intFrom('SLA_WORKERS', 0, 64, 2),
  SLA_WARNING_SHARE: share,
  COOP_PAGE_SIZE: intFrom('COOP_PAGE_SIZE', 0, 100_000, 50),
  STEGA_ACK_SECRET: z
    .string()
    .optional()
    .refine(
      (s) => s === undefined || s === '' || s.length >= 32,
      'STEGA_ACK_SECRET must be at least 32 characters (make one with `openssl rand -hex 32`)',
    ),
  STEGA_ACK_LINK_HOURS: intFrom('STEGA_ACK_LINK_HOURS', 1, 24 * 90, 72),
  STEGA_PUBLIC_URL: urlFrom('STEGA_PUBLIC_URL', ['http:', 'https:']),
  SUBCONSUMER_NAME: z
    .string()
    .optional()
    .refine(
      (s) => s === undefined || /^[^.\s]+$/.test(s),
      'SUBCONSUMER_NAME must be non-empty and contain no dot or space',
    ),
  STEGA_HEALTH_FILE: z.string().optional(),
  METRICS_PORT: intFrom('METRICS_PORT', 1, 65535, 0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  STEGA_APP_DB_PASSWORD: z.string().optional(),
});

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
  const pagerDutyEventsUrl = e.PAGERDUTY_EVENTS_URL ?? PAGERDUTY_EVENTS_URL;
  const pagerDutyProblem = urlRefusal(new URL(pagerDutyEventsUrl), e.WEBHOOK_ALLOWED_NETWORKS);
  if (pagerDutyProblem)
    throw new ConfigError(
      `invalid configuration:\n  - PAGERDUTY_EVENTS_URL ${pagerDutyProblem.startsWith('must') ? pagerDutyProblem : `is refused: ${pagerDutyProblem}`}`,
    );
  return {
    port: e.PORT,
    host: e.HOST?.trim() || '0.0.0.0',
    databaseUrl: e.DATABASE_URL,
    appDatabasePassword: e.STEGA_APP_DB_PASSWORD || undefined,
    dataDir: path.resolve(cwd, e.STEGA_DATA_DIR?.trim() || '.stega'),
    adminToken: e.STEGA_ADMIN_TOKEN || undefined,
    authFailures: { max: e.AUTH_FAILURES_MAX, windowSeconds: e.AUTH_FAILURES_WINDOW_SECONDS },
    timeZone: e.STEGA_TIME_ZONE,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM?.trim() || 'Stega <stega@localhost>',
    reportEmails: emails,
    reportWebhookUrl: e.REPORT_WEBHOOK_URL,
    reportWebhookSecret: e.REPORT_WEBHOOK_SECRET || undefined,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowedNetworks: e.WEBHOOK_ALLOWED_NETWORKS,
    pagerDutyEventsUrl,
    slaDeadIntervalSeconds: e.SLA_DEAD_INTERVAL_SECONDS,
    slaDeliveryConcurrency: e.SLA_DELIVERY_CONCURRENCY,
    slaRetryTimeScale: e.SLA_RETRY_TIME_SCALE,
    slaCircuitFailures: e.SLA_CIRCUIT_FAILURES,
    slaCircuitProbeSeconds: e.SLA_CIRCUIT_PROBE_SECONDS,
    slaRetryAfterMaxSeconds: e.SLA_RETRY_AFTER_MAX_SECONDS,
    slaWorkers: e.SLA_WORKERS,
    slaWarningShare: e.SLA_WARNING_SHARE,
    ackSecret: e.STEGA_ACK_SECRET || undefined,
    ackLinkHours: e.STEGA_ACK_LINK_HOURS,
    publicUrl: e.STEGA_PUBLIC_URL?.replace(/\/+$/, ''),
    coopPageSize: e.COOP_PAGE_SIZE,
    subconsumerName: e.SUBCONSUMER_NAME || defaultSubconsumerName(),
    healthFile: e.STEGA_HEALTH_FILE?.trim()
      ? path.resolve(cwd, e.STEGA_HEALTH_FILE.trim())
      : undefined,
    metricsPort: e.METRICS_PORT === 0 ? undefined : e.METRICS_PORT,
    logLevel: e.LOG_LEVEL ?? 'info',
    logFormat: e.LOG_FORMAT ?? 'auto',
  };
}

/** `${hostname}-${pid}`, with the dots of a qualified host name replaced (members may not contain dots). */
export function defaultSubconsumerName(): string {
  return `${os.hostname().replace(/[.\s]/g, '-')}-${process.pid}`;
}
