import pg from 'pg';
import type { ClaimOwner } from '../delivery/ledger/rows.js';
import type { Logger } from '../log.js';

export interface RunningClaimOwner {
  /** The current liveness session, or null while it is being reopened. */
  current(): ClaimOwner | null;
  stop(): Promise<void>;
}

/**
 * Keeps one idle database session open for as long as this worker lives. Its deliveries'
 * claims name this session (pid and start time): when the process dies the server ends
 * the session, and any worker may take the claims over at once instead of after their
 * lease. A lost session is reopened (claims made under the old one become takeable). The
 * session's application_name is `stega claims <member>`, so an operator (or a test) can
 * tell whose claim a ledger row's claim_pid is.
 */
export async function startClaimOwner(
  databaseUrl: string,
  member: string,
  logger: Logger,
): Promise<RunningClaimOwner> {
  let owner: ClaimOwner | null = null;
  let client: pg.Client | null = null;
  let stopped = false;
  const open = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: databaseUrl,
      application_name: `stega claims ${member}`.slice(0, 63),
    });
    next.on('error', () => {});
    next.on('end', () => {
      if (client !== next) return;
      owner = null;
      client = null;
      if (!stopped) setTimeout(() => void reopen(), 1000);
    });
    await next.connect();
    const { rows } = await next.query(
      `select pid, backend_start::text as backend_start from pg_stat_activity where pid = pg_backend_pid()`,
    );
    client = next;
    owner = { pid: Number(rows[0]?.pid), backendStart: String(rows[0]?.backend_start) };
  };
  const reopen = async () => {
    try {
      await open();
    } catch (error) {
      logger.warn({ err: error }, 'reopening the claim session failed; retrying');
      if (!stopped) setTimeout(() => void reopen(), 1000);
    }
  };
  await open();
  return {
    current: () => owner,
    async stop() {
      stopped = true;
      const last = client;
      client = null;
      owner = null;
      await last?.end().catch(() => {});
    },
  };
}
