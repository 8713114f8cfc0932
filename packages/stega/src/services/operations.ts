import { PgqueDeadLetterNotFoundError, toPgqueError } from '@stega/pgque';
import { jobAdd } from '../db/jobs.js';
import { NOTIFICATIONS_QUEUE } from '../db/migrate.js';
import {
  type ConsumerInfoRow,
  consumerInfoList,
  type DeadLetterRow,
  deadLetterList,
  deadLetterReplay,
  type QueueInfoRow,
  queueInfoList,
} from '../db/queue-status.js';
import type { ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';

/** A consumer of a queue; a cooperative group lists its members as subconsumers. */
export interface ConsumerView extends Omit<ConsumerInfoRow, 'queue_name' | 'consumer_name'> {
  name: string;
  subconsumers: (Omit<ConsumerInfoRow, 'queue_name' | 'consumer_name'> & { name: string })[];
}

export interface QueueView extends QueueInfoRow {
  consumers: ConsumerView[];
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
  const queues = await queueInfoList(ctx.pool, null);
  return Promise.all(queues.map(async (queue) => withConsumers(ctx, queue)));
}

/** One queue (default: stega.notifications) with its consumers. @throws NotFoundError */
export async function getQueue(
  ctx: ServiceContext,
  name = NOTIFICATIONS_QUEUE,
): Promise<QueueView> {
  const [queue] = await queueInfoList(ctx.pool, name);
  if (!queue) throw new NotFoundError('queue', name);
  return withConsumers(ctx, queue);
}

async function withConsumers(ctx: ServiceContext, queue: QueueInfoRow): Promise<QueueView> {
  const rows = await consumerInfoList(ctx.pool, queue.queue_name);
  const consumers = new Map<string, ConsumerView>();
  const members: { group: string; member: ConsumerView['subconsumers'][number] }[] = [];
  for (const { queue_name: _queue, consumer_name, ...figures } of rows) {
    const dot = consumer_name.indexOf('.');
    if (dot < 0) {
      consumers.set(consumer_name, { name: consumer_name, ...figures, subconsumers: [] });
    } else {
      members.push({
        group: consumer_name.slice(0, dot),
        member: { name: consumer_name.slice(dot + 1), ...figures },
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
): Promise<DeadLetterRow[]> {
  await getQueue(ctx, queue);
  return deadLetterList(ctx.pool, queue, limit);
}

/** Publishes a dead letter again and removes it. @throws NotFoundError */
export async function replayDeadLetter(
  ctx: ServiceContext,
  id: number,
): Promise<{ dead_letter_id: number; event_id: number }> {
  try {
    return { dead_letter_id: id, event_id: await deadLetterReplay(ctx.pool, id) };
  } catch (error) {
    if (toPgqueError(error, { operation: 'dlqReplay' }) instanceof PgqueDeadLetterNotFoundError) {
      throw new NotFoundError('dead letter', id);
    }
    throw error;
  }
}
