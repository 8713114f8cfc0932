import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { prioritySchema } from '../../domain/index.js';
import { getAchievement, listMissedTargets } from '../../services/achievement.js';
import type { ServiceContext } from '../../services/context.js';
import { actorOf } from '../auth.js';
import { achievementOut, itemsOf, missedTargetOut } from '../response-schemas.js';
import { errors } from '../schemas.js';

const instant = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with offset' })
  .transform((value) => new Date(value));

const filterQuery = {
  start: instant
    .optional()
    .describe('period start (inclusive), at most 400 days before end; default: end minus 7 days'),
  end: instant.optional().describe('period end (exclusive); default: now'),
  kind: z.enum(['first_response', 'resolution', 'next_reply']).optional(),
  priority: prioritySchema.optional(),
  team_id: z
    .union([z.literal('none'), z.coerce.number().int().positive()], {
      error: 'must be a team id or "none"',
    })
    .optional(),
  requester_org: z.string().min(1).optional().describe('an organisation, or "none"'),
};

type FilterQuery = {
  start?: Date | undefined;
  end?: Date | undefined;
  kind?: 'first_response' | 'resolution' | 'next_reply' | undefined;
  priority?: z.infer<typeof prioritySchema> | undefined;
  team_id?: number | 'none' | undefined;
  requester_org?: string | undefined;
};

function filterOf(query: FilterQuery) {
  const { team_id, requester_org, start, end, kind, priority } = query;
  return {
    ...(start ? { start } : {}),
    ...(end ? { end } : {}),
    ...(kind ? { kind } : {}),
    ...(priority ? { priority } : {}),
    ...(team_id === undefined ? {} : { team_id: team_id === 'none' ? null : team_id }),
    ...(requester_org === undefined
      ? {}
      : { requester_org: requester_org === 'none' ? null : requester_org }),
  };
}

/** SLA achievement: the share of targets met, and the misses behind it. Any valid token. */
export function achievementRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/sla-achievement',
      {
        config: { access: { least: 'agent', scope: 'reports:read' } },
        schema: {
          tags: ['reports'],
          summary:
            'Share of SLA targets met in a period (at most 400 days), overall and per metric, priority, team and requester organisation; a count that takes longer than 10 s is cancelled and answered 400 on start',
          querystring: z.strictObject(filterQuery),
          response: { 200: achievementOut, ...errors },
        },
      },
      async (request) => getAchievement(ctx, actorOf(request), filterOf(request.query)),
    );

    app.get(
      '/api/sla-achievement/misses',
      {
        config: { access: { least: 'agent', scope: 'reports:read' } },
        schema: {
          tags: ['reports'],
          summary: 'The missed SLA targets behind /api/sla-achievement (same filters)',
          querystring: z.strictObject({
            ...filterQuery,
            limit: z.coerce.number().int().min(1).max(500).default(100),
          }),
          response: { 200: itemsOf(missedTargetOut), ...errors },
        },
      },
      async (request) => ({
        items: await listMissedTargets(ctx, actorOf(request), {
          ...filterOf(request.query),
          limit: request.query.limit,
        }),
      }),
    );
  };
}
