import {
  type ConsumerInfo,
  consumerInfo,
  type DeadLetter,
  dlqInspect,
  dlqReplay,
  PgqueDeadLetterNotFoundError,
  type QueueInfo,
  queueInfo,
} from '@stega/pgque';
import { jobAdd } from '../db/jobs.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../db/migrate.js';
import type { ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';

// The engine's figures come from pgque's statements (milliseconds, bigint ids); the API
// reports seconds and plain numbers, so the views below only convert units and shapes.

/** What pgque reports of a queue; intervals in seconds. */
export interface QueueFigures {
  queue_name: string;
  ticker_paused: boolean;
  ticker_max_count: number;
  ticker_max_lag_seconds: number;
  ticker_idle_period_seconds: number;
  rotation_period_seconds: number;
  ticker_lag_seconds: number | null;
  events_per_second: number | null;
  new_events: number | null;
  last_tick_id: number | null;
}

/** What pgque reports of one subscription; intervals in seconds. */
export interface ConsumerFigures {
  lag_seconds: number | null;
  last_seen_seconds: number | null;
  last_tick: number | null;
  current_batch: number | null;
  next_tick: number | null;
  pending_events: number | null;
}

export interface DeadLetterView {
  id: number;
  queue_name: string;
  consumer_id: number;
  dead_at: Date;
  reason: string | null;
  event_id: number;
  event_time: Date;
  retry_count: number | null;
  type: string | null;
  payload: string | null;
}

/**
 * A member of a cooperative group. `gone`: not heard from for twice the group's dead interval
 * (15 s at least) — a live member asks for work every few seconds even when idle, so it was
 * killed or is frozen, and stays listed until it unregisters; null where the interval is
 * unknown (groups other than sla_breach_dispatcher).
 */
export interface MemberView extends ConsumerFigures {
  name: string;
  gone: boolean | null;
}

/** A consumer of a queue; a cooperative group lists its members as subconsumers. */
export interface ConsumerView extends ConsumerFigures {
  name: string;
  subconsumers: MemberView[];
}

export interface QueueView extends QueueFigures {
  consumers: ConsumerView[];
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);
const plain = (value: bigint | null) => (value === null ? null : Number(value));

function queueFigures(info: QueueInfo): QueueFigures {
  return {
    queue_name: info.queueName,
    ticker_paused: info.tickerPaused,
    ticker_max_count: info.tickerMaxCount,
    ticker_max_lag_seconds: info.tickerMaxLagMs / 1000,
    ticker_idle_period_seconds: info.tickerIdlePeriodMs / 1000,
    rotation_period_seconds: (info.rotationPeriodMs ?? 0) / 1000,
    ticker_lag_seconds: seconds(info.tickerLagMs),
    events_per_second: info.evPerSec,
    new_events: plain(info.evNew),
    last_tick_id: plain(info.lastTickId),
  };
}

function consumerFigures(info: ConsumerInfo): ConsumerFigures {
  return {
    lag_seconds: seconds(info.lagMs),
    last_seen_seconds: seconds(info.lastSeenMs),
    last_tick: plain(info.lastTick),
    current_batch: plain(info.currentBatch),
    next_tick: plain(info.nextTick),
    pending_events: plain(info.pendingEvents),
  };
}

function deadLetterView(queue: string, letter: DeadLetter): DeadLetterView {
  return {
    id: Number(letter.id),
    queue_name: queue,
    consumer_id: letter.consumerId,
    dead_at: letter.deadAt,
    reason: letter.reason,
    event_id: Number(letter.eventId),
    event_time: letter.eventTime,
    retry_count: letter.retryCount,
    type: letter.type,
    payload: letter.payload,
  };
}

/** Enqueues check_sla_breaches now (it also runs every minute from the crontab). */
export async function requestSlaCheck(
  ctx: ServiceContext,
): Promise<{ job_id: number; job: 'check_sla_breaches' }> {
  const id = await jobAdd(ctx.pool, 'check_sla_breaches', {}, { maxAttempts: 3 });
  return { job_id: id, job: 'check_sla_breaches' };
}

/** Every queue with its consumers and cooperative subconsumers. */
export async function listQueues(ctx: ServiceContext): Promise<QueueView[]> {
  const queues = await queueInfo(ctx.pool);
  return Promise.all(queues.map(async (queue) => withConsumers(ctx, queueFigures(queue))));
}

/** One queue (default: stega.notifications) with its consumers. @throws NotFoundError */
export async function getQueue(
  ctx: ServiceContext,
  name = NOTIFICATIONS_QUEUE,
): Promise<QueueView> {
  const queue = await queueInfo(ctx.pool, name);
  if (!queue) throw new NotFoundError('queue', name);
  return withConsumers(ctx, queueFigures(queue));
}

/** Whether a member stayed silent past twice its group's dead interval (MemberView.gone). */
function memberGone(ctx: ServiceContext, group: string, figures: ConsumerFigures): boolean | null {
  if (group !== SLA_GROUP || ctx.slaDeadIntervalSeconds === undefined) return null;
  if (figures.last_seen_seconds === null) return false;
  return figures.last_seen_seconds > Math.max(2 * ctx.slaDeadIntervalSeconds, 15);
}

async function withConsumers(ctx: ServiceContext, queue: QueueFigures): Promise<QueueView> {
  const rows = await consumerInfo(ctx.pool, queue.queue_name);
  const consumers = new Map<string, ConsumerView>();
  const members: { group: string; member: MemberView }[] = [];
  for (const row of rows) {
    const consumer_name = row.consumerName;
    const figures = consumerFigures(row);
    const dot = consumer_name.indexOf('.');
    if (dot < 0) {
      consumers.set(consumer_name, { name: consumer_name, ...figures, subconsumers: [] });
    } else {
      const group = consumer_name.slice(0, dot);
      members.push({
        group,
        member: {
          name: consumer_name.slice(dot + 1),
          ...figures,
          gone: memberGone(ctx, group, figures),
        },
      });
    }
  }
  for (const { group, member } of members) consumers.get(group)?.subconsumers.push(member);
  return { ...queue, consumers: [...consumers.values()] };
}

/** The newest dead letters of a queue. @throws NotFoundError for an unknown queue. */
export async function listDeadLetters(
  ctx: ServiceContext,
  queue: string,
  limit: number,
): Promise<DeadLetterView[]> {
  await getQueue(ctx, queue);
  const letters = await dlqInspect(ctx.pool, queue, limit);
  return letters.map((letter) => deadLetterView(queue, letter));
}

/** Publishes a dead letter again and removes it. @throws NotFoundError */
export async function replayDeadLetter(
  ctx: ServiceContext,
  id: number,
): Promise<{ dead_letter_id: number; event_id: number }> {
  try {
    return { dead_letter_id: id, event_id: Number(await dlqReplay(ctx.pool, BigInt(id))) };
  } catch (error) {
    if (error instanceof PgqueDeadLetterNotFoundError) {
      throw new NotFoundError('dead letter', id);
    }
    throw error;
  }
}
