import {
  type Achievement,
  type AchievementFilter,
  achievementCompute,
  achievementMisses,
  type MissedTarget,
} from '../db/achievement.js';
import type { Actor, ServiceContext } from './context.js';
import { ValidationError } from './errors.js';
import { ticketViewerOf } from './visibility.js';

export type AchievementQuery = Omit<AchievementFilter, 'start' | 'end' | 'now' | 'viewer'> & {
  start?: Date;
  end?: Date;
};

const WEEK_MS = 7 * 24 * 3600_000;

function filterOf(ctx: ServiceContext, viewer: Actor, query: AchievementQuery): AchievementFilter {
  const now = ctx.now();
  const end = query.end ?? now;
  const start = query.start ?? new Date(end.getTime() - WEEK_MS);
  if (start.getTime() >= end.getTime()) {
    throw new ValidationError([{ path: 'end', message: 'must be after start' }]);
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
  return { start: filter.start, end: filter.end, ...(await achievementCompute(ctx.pool, filter)) };
}

/** The missed targets behind a figure of getAchievement (same filters, same viewer). */
export async function listMissedTargets(
  ctx: ServiceContext,
  viewer: Actor,
  query: AchievementQuery & { limit: number },
): Promise<MissedTarget[]> {
  const { limit, ...rest } = query;
  return achievementMisses(ctx.pool, filterOf(ctx, viewer, rest), limit);
}
