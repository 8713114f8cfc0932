import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../services/context.js';
import {
  getQueue,
  listDeadLetters,
  listQueues,
  replayDeadLetter,
  requestSlaCheck,
} from '../../services/operations.js';
import { deadLetterOut, itemsOf, jobOut, queueOut } from '../response-schemas.js';
import { errors, idParams } from '../schemas.js';

const queueParams = z.strictObject({ queue: z.string().min(1).max(200) });
const deadLetterQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** Operations (admin only): jobs on demand, queue and consumer status, dead letters. */
export function operationRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = { access: 'admin' as const };

    app.post(
      '/api/jobs/check-sla-breaches',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary: 'Enqueue check_sla_breaches now; 202 with the job id',
          response: { 202: jobOut, ...errors },
        },
      },
      async (_request, reply) => reply.code(202).send(await requestSlaCheck(ctx)),
    );

    app.get(
      '/api/queues',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary: 'Every queue with its consumers and cooperative subconsumers',
          response: { 200: itemsOf(queueOut), ...errors },
        },
      },
      async () => ({ items: await listQueues(ctx) }),
    );

    app.get(
      '/api/queues/:queue',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary: 'A queue (e.g. stega.notifications) with its consumers and subconsumers',
          params: queueParams,
          response: { 200: queueOut, ...errors },
        },
      },
      async (request) => getQueue(ctx, request.params.queue),
    );

    app.get(
      '/api/queues/:queue/dead-letters',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary: "A queue's newest dead letters",
          params: queueParams,
          querystring: deadLetterQuery,
          response: { 200: itemsOf(deadLetterOut), ...errors },
        },
      },
      async (request) => ({
        items: await listDeadLetters(ctx, request.params.queue, request.query.limit),
      }),
    );

    app.post(
      '/api/dead-letters/:id/replay',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary: 'Publish a dead letter again as a new event, and remove it',
          params: idParams,
          response: {
            200: z.object({ dead_letter_id: z.number().int(), event_id: z.number().int() }),
            ...errors,
          },
        },
      },
      async (request) => replayDeadLetter(ctx, request.params.id),
    );
  };
}
