import type pg from 'pg';
import type { TokenRole } from '../db/tokens.js';

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
}

/** Who is acting: the holder of an API token. */
export interface Actor {
  role: TokenRole;
  /** Shown in the activity log: the agent's name, else the token's name. */
  name: string;
  /** The agent the token belongs to, if any; such a token writes comments as that agent. */
  agentId: number | null;
  /** null for the configured admin token (STEGA_ADMIN_TOKEN). */
  tokenId: number | null;
}

/** The actor of work the system does on its own (seeding, demo). */
export const SYSTEM_ACTOR: Actor = { role: 'admin', name: 'system', agentId: null, tokenId: null };
