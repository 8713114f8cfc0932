import type pg from 'pg';
import type { MailOutlet } from '../delivery/mail-outlet.js';
import type { TotpSecretBox } from './totp-secret-box.js';

/** What every service needs: the pool, the clock, and the SLA warning share. */
export interface ServiceContext {
  pool: pg.Pool;
  /** The current time; injected so tests (and the demo) can move it. */
  now: () => Date;
  /** Share of an SLA target after which a clock warns (config.slaWarningShare). */
  warningShare: number;
  /**
   * Networks a policy's webhook may target although loopback/private/link-local/…
   * (config.webhookAllowedNetworks). Absent: none.
   */
  webhookAllowedNetworks?: readonly string[];
  /** IANA zone of the instance (config.timeZone, STEGA_TIME_ZONE); absent: UTC. */
  timeZone?: string;
  /**
   * Which tickets an agent sees (config.ticketVisibility, TICKET_VISIBILITY): `team` (their
   * teams', their own, those of no team) or `all`. Absent: `team`.
   */
  ticketVisibility?: 'team' | 'all';
  /**
   * Sends the emails to customers a transaction recorded (a public reply), once it committed
   * (delivery/mail-out.ts). Absent: they are recorded due for the sla-breach-workers' retry loops.
   */
  mailOut?: MailOutlet;
  /** Seals and opens agents' TOTP secrets at rest (the web process; second-factor.ts). */
  totpSecrets?: TotpSecretBox;
  /**
   * A silent sla-breach-worker's batch is taken over after this (config.slaDeadIntervalSeconds);
   * the operations page calls a member not heard from for twice as long (15 s at least) gone.
   */
  slaDeadIntervalSeconds?: number;
  /**
   * How long a ticket search (a list with `q`) may run before PostgreSQL cancels it, ms
   * (a `statement_timeout` of its own transaction); the caller gets a 400 on `q`. Absent:
   * SEARCH_TIMEOUT_MS.
   */
  searchTimeoutMs?: number;
  /**
   * How long an SLA achievement figure or its list of misses may run before PostgreSQL
   * cancels it, ms (a `statement_timeout` of its own transaction); the caller gets a 400 on
   * `start`. Absent: REPORT_TIMEOUT_MS.
   */
  reportTimeoutMs?: number;
}

/** The default time an SLA achievement query may take, ms: far above a year's on a busy desk. */
export const REPORT_TIMEOUT_MS = 10_000;

/** The default time a ticket search may take, ms: far above a healthy search (≤ 20 ms). */
export const SEARCH_TIMEOUT_MS = 5_000;

/**
 * What a principal is: an agent of one of the three roles (signed in, or through their own
 * token), the admin (the configured admin token or an admin token), or an integration token.
 */
export type ActorRole = 'admin' | 'supervisor' | 'agent' | 'integration';

/**
 * What an integration token may do, named at its creation. Agents' own tokens have none: they
 * act as their agent.
 */
export const SCOPES = [
  'tickets:read',
  'tickets:write',
  'comments:write',
  'comments:requester',
  'escalations:acknowledge',
  'reports:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is acting: a signed-in agent, or the holder of an API token. */
export interface Actor {
  role: ActorRole;
  /** Shown in the activity log: the agent's name, else the token's name. */
  name: string;
  /** The agent acting, if any; their comments are written as that agent. */
  agentId: number | null;
  /** The API token used; null for the configured admin token (STEGA_ADMIN_TOKEN) and sessions. */
  tokenId: number | null;
  /** An integration token's scopes; absent or empty for everyone else. */
  scopes?: readonly Scope[];
}

/** The actor of work the system does on its own (seeding, demo). */
export const SYSTEM_ACTOR: Actor = {
  role: 'admin',
  name: 'system',
  agentId: null,
  tokenId: null,
  scopes: [],
};
