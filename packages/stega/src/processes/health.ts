import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { consumerInfo } from '@stega/pgque';
import type pg from 'pg';
import type { Config } from '../config.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../db/migrate.js';
import type { Logger } from '../log.js';
import type { RunningService } from './service.js';

/** What a long-running role writes to its heartbeat file (STEGA_HEALTH_FILE). */
export interface HealthReport {
  role: string;
  pid: number;
  /** The last probe's result: the database answered and the role's own check passed. */
  ok: boolean;
  /** When the probe finished (ISO 8601). */
  at: string;
  error?: string;
}

/** How often the heartbeat probes and rewrites the file. */
export const HEALTH_INTERVAL_MS = 10_000;
/** A report older than this is stale: the process is stopped, hung or gone. */
export const HEALTH_MAX_AGE_MS = 3 * HEALTH_INTERVAL_MS;

/**
 * The probe of a role: one round trip to the database, and for an sla-breach-worker also
 * that its member row is still in the group (a member that left or was never registered
 * delivers nothing). Throws when unhealthy.
 */
export function healthProbe(role: string, config: Config, pool: pg.Pool): () => Promise<void> {
  if (role !== 'sla-breach-worker') {
    return async () => {
      await pool.query('select 1');
    };
  }
  const member = `${SLA_GROUP}.${config.subconsumerName}`;
  return async () => {
    const rows = await consumerInfo(pool, NOTIFICATIONS_QUEUE, member);
    if (rows.length !== 1) throw new Error(`member ${member} is not registered`);
  };
}

/**
 * Rewrites `file` every `intervalMs` with the result of `probe`, so `stega healthcheck`
 * (a container health check) sees both that this process's event loop runs (the file is
 * fresh) and that its work is possible (the probe passed). The file is replaced
 * atomically and removed on stop.
 */
export function startHealthFile(
  file: string,
  role: string,
  probe: () => Promise<void>,
  logger: Logger,
  intervalMs = HEALTH_INTERVAL_MS,
): RunningService {
  let running: Promise<void> | null = null;
  const beat = async () => {
    const report: HealthReport = { role, pid: process.pid, ok: true, at: '' };
    try {
      await probe();
    } catch (error) {
      report.ok = false;
      report.error = error instanceof Error ? error.message : String(error);
    }
    report.at = new Date().toISOString();
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      await writeFile(temporary, `${JSON.stringify(report)}\n`);
      await rename(temporary, file);
    } catch (error) {
      logger.warn({ err: error, file }, 'could not write the health file');
    }
  };
  const tick = () => {
    running ??= beat().finally(() => {
      running = null;
    });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    name: 'health-file',
    stop: async () => {
      clearInterval(timer);
      await running;
      await rm(file, { force: true });
    },
  };
}

/** Reads a heartbeat file: healthy when it reports ok and is at most `maxAgeMs` old. */
export async function healthFileCheck(
  file: string,
  maxAgeMs = HEALTH_MAX_AGE_MS,
  now = new Date(),
): Promise<{ healthy: boolean; reason: string }> {
  let report: HealthReport;
  try {
    report = JSON.parse(await readFile(file, 'utf8')) as HealthReport;
  } catch (error) {
    return {
      healthy: false,
      reason: `no readable health file ${file}: ${(error as Error).message}`,
    };
  }
  const age = now.getTime() - Date.parse(report.at);
  if (!(age <= maxAgeMs)) {
    return {
      healthy: false,
      reason: `${report.role} (pid ${report.pid}): last heartbeat ${Math.round(age / 1000)} s ago`,
    };
  }
  if (!report.ok) {
    return { healthy: false, reason: `${report.role} (pid ${report.pid}): ${report.error}` };
  }
  return { healthy: true, reason: `${report.role} (pid ${report.pid}): ok` };
}
