import { coopTakeovers } from '@stega/pgque';
import { deliveryListOutstanding, endpointListTroubled } from '../db/deliveries.js';
import {
  deliveryCountByReplica,
  deliveryLatenessSummary,
  type LatenessSummary,
  type UndeliveredSummary,
  undeliveredAlertSummary,
} from '../db/delivery-stats.js';
import {
  type CronTaskRow,
  cronTaskList,
  type JobQueuedRow,
  type JobRunRow,
  jobQueuedList,
  jobRunList,
} from '../db/job-runs.js';
import { endpointLabel } from '../metrics.js';
import type { ServiceContext } from './context.js';
import { getQueue } from './operations.js';

/**
 * What operators watch besides the queues themselves: takeovers in cooperative groups, job
 * runs, and how the alert deliveries are shared between the sla-breach-worker replicas.
 */

/** One takeover of a cooperative batch. */
export interface TakeoverRow {
  taken_at: Date;
  queue_name: string;
  consumer_name: string;
  old_subconsumer: string;
  new_subconsumer: string;
  old_batch_id: number | null;
  new_batch_id: number | null;
}

export interface TakeoverView {
  /** Always true: the engine ships with Stega (kept for API compatibility). */
  available: boolean;
  items: TakeoverRow[];
}

/** The newest takeovers of a cooperative group. @throws NotFoundError for an unknown queue. */
export async function listTakeovers(
  ctx: ServiceContext,
  queue: string,
  consumer: string,
  limit: number,
): Promise<TakeoverView> {
  await getQueue(ctx, queue);
  const takeovers = await coopTakeovers(ctx.pool, queue, consumer, limit);
  return {
    available: true,
    items: takeovers.map((t) => ({
      taken_at: t.takenAt,
      queue_name: t.queueName,
      consumer_name: t.consumerName,
      old_subconsumer: t.oldSubconsumer,
      new_subconsumer: t.newSubconsumer,
      old_batch_id: t.oldBatchId === null ? null : Number(t.oldBatchId),
      new_batch_id: t.newBatchId === null ? null : Number(t.newBatchId),
    })),
  };
}

export interface JobOverview {
  runs: JobRunRow[];
  queued: JobQueuedRow[];
  cron: CronTaskRow[];
}

/** Finished runs (newest first), jobs still queued or running, and the cron tasks. */
export async function jobOverview(ctx: ServiceContext, limit: number): Promise<JobOverview> {
  const [runs, queued, cron] = await Promise.all([
    jobRunList(ctx.pool, limit),
    jobQueuedList(ctx.pool, limit),
    cronTaskList(ctx.pool),
  ]);
  return { runs, queued, cron };
}

export interface DeliverySeries {
  from: Date;
  to: Date;
  bucket_seconds: number;
  /** Every bucket start in `[from, to)`, oldest first. */
  buckets: Date[];
  /** One series per replica, with a count for every bucket (zeros included). */
  replicas: { delivered_by: string; counts: number[]; total: number }[];
  /** Lateness (delivered − due) of the deliveries of the last hour, whatever `minutes` is. */
  lateness: LatenessSummary & { window_seconds: number };
  /** Alerts not delivered yet, and the one waiting longest. */
  undelivered: {
    count: number;
    oldest: (NonNullable<UndeliveredSummary['oldest']> & { age_seconds: number }) | null;
  };
}

const LATENESS_WINDOW_SECONDS = 3600;

/**
 * Deliveries per replica over the last `minutes`, in buckets of `bucketSeconds`; with the
 * lateness of the last hour's deliveries and the alerts still undelivered (from the ledger).
 */
export async function deliveriesPerReplica(
  ctx: ServiceContext,
  minutes: number,
  bucketSeconds: number,
): Promise<DeliverySeries> {
  const bucketMs = bucketSeconds * 1000;
  const now = ctx.now().getTime();
  const to = new Date(Math.floor(now / bucketMs) * bucketMs + bucketMs);
  const from = new Date(to.getTime() - Math.ceil((minutes * 60_000) / bucketMs) * bucketMs);
  const buckets: Date[] = [];
  for (let t = from.getTime(); t < to.getTime(); t += bucketMs) buckets.push(new Date(t));
  const nowDate = new Date(now);
  const [rows, lateness, undelivered] = await Promise.all([
    deliveryCountByReplica(ctx.pool, from, to, bucketSeconds),
    deliveryLatenessSummary(
      ctx.pool,
      new Date(now - LATENESS_WINDOW_SECONDS * 1000),
      new Date(now + 1000),
    ),
    undeliveredAlertSummary(ctx.pool, nowDate),
  ]);
  const replicas = new Map<string, number[]>();
  for (const row of rows) {
    const index = Math.round((row.bucket_start.getTime() - from.getTime()) / bucketMs);
    if (index < 0 || index >= buckets.length) continue;
    let counts = replicas.get(row.delivered_by);
    if (!counts) {
      counts = buckets.map(() => 0);
      replicas.set(row.delivered_by, counts);
    }
    counts[index] = (counts[index] ?? 0) + row.deliveries;
  }
  return {
    from,
    to,
    bucket_seconds: bucketSeconds,
    buckets,
    replicas: [...replicas.entries()]
      .map(([delivered_by, counts]) => ({
        delivered_by,
        counts,
        total: counts.reduce((a, b) => a + b, 0),
      }))
      .sort((a, b) => a.delivered_by.localeCompare(b.delivered_by)),
    lateness: { ...lateness, window_seconds: LATENESS_WINDOW_SECONDS },
    undelivered: {
      count: undelivered.count,
      oldest: undelivered.oldest
        ? {
            ...undelivered.oldest,
            age_seconds: Math.max(0, (now - undelivered.oldest.due_at.getTime()) / 1000),
          }
        : null,
    },
  };
}

/** Alerts not delivered yet, per channel, and the endpoints whose circuit is open or failing. */
export async function outstandingDeliveries(ctx: ServiceContext, limit: number) {
  const [items, endpoints] = await Promise.all([
    deliveryListOutstanding(ctx.pool, limit),
    endpointListTroubled(ctx.pool, 100),
  ]);
  return {
    items,
    // a webhook URL's path often carries a secret: operators see scheme://host
    endpoints: endpoints.map((e) => ({ ...e, endpoint: endpointLabel(e.endpoint) })),
  };
}
