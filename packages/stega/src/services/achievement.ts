import type { Queryable } from '@stega/pgque';
import {
  type Achievement,
  type AchievementFilter,
  achievementCompute,
  achievementMisses,
  type MissedTarget,
} from '../db/achievement.js';
import { type Actor, REPORT_TIMEOUT_MS, type ServiceContext } from './context.js';
import { ValidationError } from './errors.js';
import { withinStatementTimeout } from './statement-timeout.js';
import { ticketViewerOf } from './visibility.js';

export type AchievementQuery = Omit<AchievementFilter, 'start' | 'end' | 'now' | 'viewer'> & {
  start?: Date;
  end?: Date;
};

const DAY_MS = 24 * 3600_000;
const WEEK_MS = 7 * DAY_MS;
/** The longest period asked for at once, days (as a schedule's window): a year and some. */
export const ACHIEVEMENT_MAX_DAYS = 400;

function filterOf(ctx: ServiceContext, viewer: Actor, query: AchievementQuery): AchievementFilter {
  const now = ctx.now();
  const end = query.end ?? now;
  const start = query.start ?? new Date(end.getTime() - WEEK_MS);
  if (start.getTime() >= end.getTime()) {
    throw new ValidationError([{ path: 'end', message: 'must be after start' }]);
  }
  if (end.getTime() - start.getTime() > ACHIEVEMENT_MAX_DAYS * DAY_MS) {
    throw new ValidationError([
      {
        path: 'start',
        message: `must be at most ${ACHIEVEMENT_MAX_DAYS} days before end: ask for a longer span in parts`,
      },
    ]);
  }
  return { ...query, start, end, now, viewer: ticketViewerOf(ctx, viewer) };
}

/**
 * The share of SLA targets met in a period (default: the seven days before now), overall
 * and per metric, priority, team and requester organisation (db/achievement.ts says what
 * counts when), over the tickets `viewer` sees.
 */
export async function getAchievement(
  ctx: ServiceContext,
  viewer: Actor,
  query: AchievementQuery,
): Promise<Achievement & { start: Date; end: Date }> {
  const filter = filterOf(ctx, viewer, query);
  const figures = await withinTimeout(ctx, (db) => achievementCompute(db, filter));
  return { start: filter.start, end: filter.end, ...figures };
}

/** The missed targets behind a figure of getAchievement (same filters, same viewer). */
export async function listMissedTargets(
  ctx: ServiceContext,
  viewer: Actor,
  query: AchievementQuery & { limit: number },
): Promise<MissedTarget[]> {
  const { limit, ...rest } = query;
  const filter = filterOf(ctx, viewer, rest);
  return withinTimeout(ctx, (db) => achievementMisses(db, filter, limit));
}

/**
 * `read` in a transaction of its own whose statements PostgreSQL cancels after
 * `ctx.reportTimeoutMs` (as a ticket search): a period that takes too long to aggregate
 * cannot hold a connection and a core for as long as it likes. A cancelled one is a 400 on
 * `start` saying what to do.
 */
async function withinTimeout<T>(ctx: ServiceContext, read: (db: Queryable) => Promise<T>) {
  const timeoutMs = Math.max(1, Math.round(ctx.reportTimeoutMs ?? REPORT_TIMEOUT_MS));
  return withinStatementTimeout(
    ctx.pool,
    timeoutMs,
    read,
    () =>
      new ValidationError([
        {
          path: 'start',
          message: `took longer than ${timeoutMs / 1000} s to count: ask for a shorter period, or filter by team, priority or metric`,
        },
      ]),
  );
}
