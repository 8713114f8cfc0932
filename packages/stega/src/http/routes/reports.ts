import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../services/context.js';
import { getReport, listReports, requestReport } from '../../services/reports.js';
import { actorOf } from '../auth.js';
import { itemsOf, jobOut, reportDetailOut, reportOut } from '../response-schemas.js';
import { errors, idParams, pageQuery } from '../schemas.js';

const instant = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with offset' })
  .transform((value) => new Date(value));

const generateBody = z
  .strictObject({ period_start: instant.optional(), period_end: instant.optional() })
  .superRefine((body, ctx) => {
    // zod runs this even when a field failed; judge only well-formed instants
    const { period_start: start, period_end: end } = body as Record<string, unknown>;
    if ([start, end].some((v) => v !== undefined && !(v instanceof Date))) return;
    if ((body.period_start === undefined) !== (body.period_end === undefined)) {
      const missing = body.period_start === undefined ? 'period_start' : 'period_end';
      ctx.addIssue({
        code: 'custom',
        path: [missing],
        message: 'period_start and period_end go together',
      });
    } else if (body.period_start && body.period_end && body.period_start >= body.period_end) {
      ctx.addIssue({ code: 'custom', path: ['period_end'], message: 'must be after period_start' });
    }
  });

/** Activity reports: read with any token; generating one on demand needs an admin token. */
export function reportRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/reports',
      {
        config: { access: { least: 'supervisor', scope: 'reports:read' } },
        schema: {
          tags: ['reports'],
          summary: 'Activity reports, latest period first',
          querystring: z.strictObject(pageQuery),
          response: { 200: itemsOf(reportOut), ...errors },
        },
      },
      async (request) => ({ items: await listReports(ctx, request.query) }),
    );

    app.get(
      '/api/reports/:id',
      {
        config: { access: { least: 'supervisor', scope: 'reports:read' } },
        schema: {
          tags: ['reports'],
          summary: 'An activity report with its deliveries',
          params: idParams,
          response: { 200: reportDetailOut, ...errors },
        },
      },
      async (request) => getReport(ctx, request.params.id, actorOf(request)),
    );

    app.post(
      '/api/reports',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['reports'],
          summary:
            'Enqueue generate_activity_report for a period (default: the trailing week); 202 with the job id',
          body: generateBody.nullish(),
          response: { 202: jobOut, ...errors },
        },
      },
      async (request, reply) => reply.code(202).send(await requestReport(ctx, request.body ?? {})),
    );
  };
}
