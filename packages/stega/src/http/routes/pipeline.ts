import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../services/context.js';
import {
  deliveriesPerReplica,
  jobOverview,
  listTakeovers,
  outstandingDeliveries,
} from '../../services/pipeline.js';
import { outstandingDeliveriesOut } from '../response-schemas.js';
import { errors } from '../schemas.js';

const id = z.number().int();
const nullableDate = z.date().nullable();

export const takeoversOut = z.object({
  available: z
    .boolean()
    .describe('always true (the engine ships with Stega); kept for older clients'),
  items: z.array(
    z.object({
      taken_at: z.date(),
      queue_name: z.string(),
      consumer_name: z.string(),
      old_subconsumer: z.string(),
      new_subconsumer: z.string(),
      old_batch_id: id.nullable(),
      new_batch_id: id.nullable(),
    }),
  ),
});

export const jobOverviewOut = z.object({
  runs: z.array(
    z.object({
      id,
      finished_at: z.date(),
      task: z.string(),
      job_id: id,
      attempts: z.number().int(),
      max_attempts: z.number().int(),
      error: z.string().nullable(),
      duration_ms: z.number().nullable(),
      worker: z.string().nullable(),
    }),
  ),
  queued: z.array(
    z.object({
      id,
      task: z.string(),
      run_at: z.date(),
      attempts: z.number().int(),
      max_attempts: z.number().int(),
      last_error: z.string().nullable(),
      locked_at: nullableDate,
      locked_by: z.string().nullable(),
      created_at: z.date(),
    }),
  ),
  cron: z.array(
    z.object({ identifier: z.string(), known_since: z.date(), last_execution: nullableDate }),
  ),
});

export const deliverySeriesOut = z.object({
  from: z.date(),
  to: z.date(),
  bucket_seconds: z.number().int(),
  buckets: z.array(z.date()),
  replicas: z.array(
    z.object({
      delivered_by: z.string(),
      counts: z.array(z.number().int()),
      total: z.number().int(),
    }),
  ),
  lateness: z
    .object({
      window_seconds: z.number().int(),
      deliveries: z.number().int(),
      p50_seconds: z.number().nullable(),
      p99_seconds: z.number().nullable(),
      max_seconds: z.number().nullable(),
    })
    .describe(
      'Delivered minus due instant (warning instant for warnings) of the deliveries of the last hour, whatever `minutes` is',
    ),
  undelivered: z
    .object({
      count: z.number().int(),
      oldest: z
        .object({
          alert_type: z.enum(['breach', 'warning', 'escalation']),
          alert_id: id,
          ticket_id: id,
          due_at: z.date(),
          age_seconds: z.number(),
        })
        .nullable(),
    })
    .describe(
      'Alerts with a channel still to deliver or not yet picked up by a worker, and the one due longest ago',
    ),
});

const takeoverParams = z.strictObject({
  queue: z.string().min(1).max(200),
  consumer: z.string().min(1).max(200),
});
const limitQuery = (max: number, fallback: number) =>
  z.strictObject({ limit: z.coerce.number().int().min(1).max(max).default(fallback) });
const seriesQuery = z
  .strictObject({
    minutes: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60)
      .default(60),
    bucket_seconds: z.coerce.number().int().min(10).max(86_400).default(60),
  })
  .refine((q) => (q.minutes * 60) / q.bucket_seconds <= 2000, {
    path: ['bucket_seconds'],
    error: 'too small for minutes (at most 2000 buckets)',
  });

/** What operators watch (admin only): takeovers, job runs, deliveries per replica. */
export function pipelineRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = { access: 'admin' as const };

    app.get(
      '/api/queues/:queue/consumers/:consumer/takeovers',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary: 'Takeovers in a cooperative group, newest first (a stuck member lost its batch)',
          params: takeoverParams,
          querystring: limitQuery(1000, 100),
          response: { 200: takeoversOut, ...errors },
        },
      },
      async (request) =>
        listTakeovers(ctx, request.params.queue, request.params.consumer, request.query.limit),
    );

    app.get(
      '/api/job-runs',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary: 'Finished job runs (newest first), jobs queued or running, cron tasks',
          querystring: limitQuery(500, 50),
          response: { 200: jobOverviewOut, ...errors },
        },
      },
      async (request) => jobOverview(ctx, request.query.limit),
    );

    app.get(
      '/api/deliveries/per-replica',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary:
            'Alert deliveries per sla-breach-worker replica (delivered_by) over time; lateness of the last hour and the oldest undelivered alert',
          querystring: seriesQuery,
          response: { 200: deliverySeriesOut, ...errors },
        },
      },
      async (request) =>
        deliveriesPerReplica(ctx, request.query.minutes, request.query.bucket_seconds),
    );

    app.get(
      '/api/deliveries/outstanding',
      {
        config: admin,
        schema: {
          tags: ['operations'],
          summary:
            'Alert deliveries not delivered (retrying, in flight, failed for good, fallbacks waiting), newest first, and endpoints whose circuit is open or failing',
          querystring: limitQuery(1000, 100),
          response: { 200: outstandingDeliveriesOut, ...errors },
        },
      },
      async (request) => outstandingDeliveries(ctx, request.query.limit),
    );
  };
}
