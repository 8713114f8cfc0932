// Partitioned consumers (PgQue 0.3 partition keys): slots, their leases, reading and
// settling a slot, the slot status view, and the worker list PartitionedConsumer uses.
import { PgqueInvalidInputError } from '../errors.js';
import type { Queryable } from '../queryable.js';
import { asBigInt, asBigIntOrNull, asDate } from '../row-values.js';
import { intervalText, MAX_INT4, requireInteger, requireName } from '../validation.js';
import {
  MESSAGE_COLUMNS,
  type Message,
  messageFromRow,
  type NackRequest,
  nackArrays,
} from './consume.js';
import { inTransaction, runStatement } from './run.js';

/** Most slots a partitioned consumer may have (the engine refuses more). */
export const MAX_SLOTS = 1024;

/** Default lease of `claimSlot` and of a worker's membership, in ms (the engine's 30 s). */
export const DEFAULT_LEASE_TTL = 30_000;

/** One slot of a partitioned consumer, as the worker holding its lease names it. */
export interface SlotHolder {
  queue: string;
  /** The partitioned consumer's name. */
  consumer: string;
  /** The slot, 0 … slots − 1. */
  slot: number;
  /** The consumer's slot count (`n`), as it was subscribed. */
  slots: number;
  /** The worker: stable for its process, unique among live workers (never a backend pid). */
  worker: string;
}

/** One expected slot (`pgque.partition_slot_status`). */
export interface SlotStatus {
  queueName: string;
  consumer: string;
  slot: number;
  slots: number;
  /** Whether the slot's engine subscription exists (false: incomplete setup). */
  subscribed: boolean;
  /** The worker holding a live lease; null when free or lapsed. */
  leaseOwner: string | null;
  /** The stored lease expiry, lapsed ones included. */
  leaseUntil: Date | null;
  /** Raised at each change of holder: its growth is churn. */
  epoch: bigint;
  lastTick: bigint | null;
  /** Events past the slot's cursor, before its hash filter (about n × its own share). */
  pendingEvents: bigint | null;
  /** Events rotation moved to the slot's backlog because its lease had lapsed. */
  parkedEvents: bigint;
}

/**
 * Subscribes every slot of partitioned consumer `consumer` at the queue's newest tick, all
 * or none: `slots` when it made them, 0 when all existed. Run it before the events the
 * consumer must see are sent. Another slot count than the first one is refused
 * (`PgqueSlotCountMismatchError`), as is a consumer missing some slots
 * (`PgquePartitionIncompleteError`).
 */
export async function subscribePartitioned(
  db: Queryable,
  queue: string,
  consumer: string,
  slots: number,
): Promise<number> {
  const op = 'subscribePartitioned';
  names(op, queue, consumer);
  requireInteger(slots, 'slots', op, { min: 1, max: MAX_SLOTS });
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    'select pgque.subscribe_partitioned($1, $2, $3) as r',
    [queue, consumer, slots],
  );
  return Number(rows[0]?.r);
}

/** Subscribes one slot (repair of an incomplete consumer); 1 when new, 0 when it was. */
export async function subscribeSlot(
  db: Queryable,
  queue: string,
  consumer: string,
  slot: number,
  slots: number,
): Promise<number> {
  const op = 'subscribeSlot';
  names(op, queue, consumer);
  requireInteger(slots, 'slots', op, { min: 1, max: MAX_SLOTS });
  requireInteger(slot, 'slot', op, { min: 0, max: slots - 1 });
  const rows = await runStatement(
    db,
    op,
    { queue, consumer, slot },
    'select pgque.subscribe_slot($1, $2, $3, $4) as r',
    [queue, consumer, slot, slots],
  );
  return Number(rows[0]?.r);
}

/**
 * Removes one slot with its retries, dead letters, lease and parked events; 1 when its
 * subscription was removed. The consumer goes with its last slot.
 */
export async function unsubscribeSlot(
  db: Queryable,
  queue: string,
  consumer: string,
  slot: number,
): Promise<number> {
  const op = 'unsubscribeSlot';
  names(op, queue, consumer);
  requireInteger(slot, 'slot', op, { min: 0, max: MAX_SLOTS - 1 });
  const rows = await runStatement(
    db,
    op,
    { queue, consumer, slot },
    'select pgque.unsubscribe_slot($1, $2, $3) as r',
    [queue, consumer, slot],
  );
  return Number(rows[0]?.r);
}

/**
 * Leases a slot to `worker` for `ttl` ms (default 30 000, at least 1 000): its epoch, or
 * null when another worker holds it or is in a call on it right now (never waits). A free
 * or lapsed slot is taken with its epoch raised, fencing the previous holder; the holder
 * claiming again renews its lease and keeps the epoch.
 */
export async function claimSlot(
  db: Queryable,
  holder: Omit<SlotHolder, 'slots'>,
  options: { ttl?: number } = {},
): Promise<bigint | null> {
  const op = 'claimSlot';
  slotRef(op, holder);
  const ttl = leaseTtl(options.ttl, op);
  const rows = await runStatement(
    db,
    op,
    context(holder),
    'select pgque.claim_slot($1, $2, $3, $4, $5::interval) as epoch',
    [holder.queue, holder.consumer, holder.slot, holder.worker, ttl],
  );
  return asBigIntOrNull(rows[0]?.epoch);
}

/**
 * `claimSlot` for several slots of one consumer in one statement (a worker renewing the
 * leases it holds): each slot's epoch, or null as `claimSlot` answers.
 */
export async function claimSlots(
  db: Queryable,
  holder: Omit<SlotHolder, 'slots' | 'slot'>,
  slots: number[],
  options: { ttl?: number } = {},
): Promise<Map<number, bigint | null>> {
  const op = 'claimSlots';
  for (const slot of slots) slotRef(op, { ...holder, slot });
  if (slots.length === 0) return new Map();
  const ttl = leaseTtl(options.ttl, op);
  const rows = await runStatement(
    db,
    op,
    { queue: holder.queue, consumer: holder.consumer, worker: holder.worker },
    `select k.slot, pgque.claim_slot($1, $2, k.slot, $3, $4::interval) as epoch
       from unnest($5::int[]) as k(slot)`,
    [holder.queue, holder.consumer, holder.worker, ttl, slots],
  );
  return new Map(rows.map((row) => [Number(row.slot), asBigIntOrNull(row.epoch)]));
}

/**
 * Gives a slot back at a batch boundary: true, or false when `worker` did not hold it.
 * Throws `PgqueSlotBatchOpenError` while a batch is open on the slot.
 */
export async function releaseSlot(
  db: Queryable,
  holder: Omit<SlotHolder, 'slots'>,
): Promise<boolean> {
  const op = 'releaseSlot';
  slotRef(op, holder);
  const rows = await runStatement(
    db,
    op,
    context(holder),
    'select pgque.release_slot($1, $2, $3, $4) as released',
    [holder.queue, holder.consumer, holder.slot, holder.worker],
  );
  return rows[0]?.released === true;
}

/**
 * The slot's open batch (reopened from the start until acked): its events whose partition
 * key hashes to the slot, in event-id order, at most `maxMessages` (default 100) of them.
 * `ackPartitioned` finishes the whole batch, so pass `MAX_INT4` unless the batch is known
 * to be small. `[]` when nothing is ready. Throws `PgqueSlotLeaseLostError` when `worker`
 * does not hold the slot; renews its lease otherwise.
 */
export async function receivePartitioned(
  db: Queryable,
  holder: SlotHolder,
  maxMessages = 100,
): Promise<Message[]> {
  const op = 'receivePartitioned';
  slotHolder(op, holder);
  requireInteger(maxMessages, 'maxMessages', op, { min: 1, max: MAX_INT4 });
  const rows = await runStatement(
    db,
    op,
    context(holder),
    `select ${MESSAGE_COLUMNS} from pgque.receive_partitioned($1, $2, $3, $4, $5, $6)`,
    [holder.queue, holder.consumer, holder.slot, holder.slots, holder.worker, maxMessages],
  );
  return rows.map(messageFromRow);
}

/** Finishes the slot's open batch: 1, or 0 when none was open. Fenced like receive. */
export async function ackPartitioned(db: Queryable, holder: SlotHolder): Promise<number> {
  const op = 'ackPartitioned';
  slotHolder(op, holder);
  const rows = await runStatement(
    db,
    op,
    context(holder),
    'select pgque.ack_partitioned($1, $2, $3, $4, $5) as r',
    [holder.queue, holder.consumer, holder.slot, holder.slots, holder.worker],
  );
  return Number(rows[0]?.r);
}

/**
 * Hands one message of the slot's open batch back: retried after `retryAfter` seconds
 * (default 60) for this slot only, or dead-lettered once out of retries. The batch stays
 * open. A retried event comes back after later events of its key. Fenced like receive.
 */
export async function nackPartitioned(
  db: Queryable,
  holder: SlotHolder,
  message: NackRequest['message'],
  options: { retryAfter?: number; reason?: string } = {},
): Promise<void> {
  const op = 'nackPartitioned';
  slotHolder(op, holder);
  const [request] = nackArrays([{ message, ...options }], op);
  await runStatement(
    db,
    op,
    context(holder),
    `select pgque.nack_partitioned($1, $2, $3, $4, $5,
              row($6::bigint, null, null, null, null, null, null, null, null, null)::pgque.message,
              $7::float8 * interval '1 second', $8)`,
    [
      holder.queue,
      holder.consumer,
      holder.slot,
      holder.slots,
      holder.worker,
      request?.msgId,
      request?.retryAfter,
      request?.reason ?? null,
    ],
  );
}

/**
 * Nacks (or rejects: dead letter at once) `nacks` and acks the slot's batch in one
 * transaction, each call fenced by the lease: a worker that lost the slot changes nothing.
 * Returns the ack result. On a pool it opens its own transaction; on a connection of the
 * caller's it runs in whatever transaction the caller has open.
 */
export async function settlePartitioned(
  db: Queryable,
  holder: SlotHolder,
  nacks: NackRequest[] = [],
): Promise<number> {
  const op = 'settlePartitioned';
  slotHolder(op, holder);
  const requests = nackArrays(nacks, op);
  const key = [holder.queue, holder.consumer, holder.slot, holder.slots, holder.worker];
  const ack = 'select pgque.ack_partitioned($1, $2, $3, $4, $5) as r';
  if (requests.length === 0) {
    const rows = await runStatement(db, op, context(holder), ack, key);
    return Number(rows[0]?.r);
  }
  return inTransaction(db, op, context(holder), async (tx) => {
    const retries = requests.filter((r) => !r.reject);
    const rejects = requests.filter((r) => r.reject);
    if (retries.length > 0) {
      await tx.query(
        `select count(pgque.nack_partitioned($1, $2, $3, $4, $5,
                  row(n.id, null, null, null, null, null, null, null, null, null)::pgque.message,
                  n.delay * interval '1 second', n.reason))
           from unnest($6::bigint[], $7::float8[], $8::text[]) as n(id, delay, reason)`,
        [
          ...key,
          retries.map((r) => r.msgId),
          retries.map((r) => r.retryAfter),
          retries.map((r) => r.reason),
        ],
      );
    }
    if (rejects.length > 0) {
      await tx.query(
        `select count(pgque.reject_partitioned($1, $2, $3, $4, $5,
                  row(n.id, null, null, null, null, null, null, null, null, null)::pgque.message,
                  n.reason))
           from unnest($6::bigint[], $7::text[]) as n(id, reason)`,
        [...key, rejects.map((r) => r.msgId), rejects.map((r) => r.reason)],
      );
    }
    const { rows } = await tx.query(ack, key);
    return Number(rows[0]?.r);
  });
}

/** Every expected slot, of every partitioned consumer or of the ones named. */
export async function partitionSlotStatus(
  db: Queryable,
  filter: { queue?: string; consumer?: string } = {},
): Promise<SlotStatus[]> {
  const op = 'partitionSlotStatus';
  if (filter.queue !== undefined) requireName(filter.queue, 'queue', op);
  if (filter.consumer !== undefined) requireName(filter.consumer, 'consumer', op);
  const rows = await runStatement(
    db,
    op,
    { ...(filter.queue ? { queue: filter.queue } : {}) },
    `select queue_name, consumer, slot, n, subscribed, lease_owner, lease_until, epoch,
            last_tick, pending_events, parked_events
       from pgque.partition_slot_status
      where ($1::text is null or queue_name = $1) and ($2::text is null or consumer = $2)
      order by queue_name, consumer, slot`,
    [filter.queue ?? null, filter.consumer ?? null],
  );
  return rows.map((row) => ({
    queueName: String(row.queue_name),
    consumer: String(row.consumer),
    slot: Number(row.slot),
    slots: Number(row.n),
    subscribed: row.subscribed === true,
    leaseOwner: row.lease_owner === null ? null : String(row.lease_owner),
    leaseUntil: row.lease_until === null ? null : asDate(row.lease_until),
    epoch: asBigInt(row.epoch),
    lastTick: asBigIntOrNull(row.last_tick),
    pendingEvents: asBigIntOrNull(row.pending_events),
    parkedEvents: asBigInt(row.parked_events),
  }));
}

/**
 * Announces (or renews) `worker` as live in the partitioned consumer for `ttl` ms and
 * returns the live workers, sorted (an extension beyond PgQue 0.3, for PartitionedConsumer).
 */
export async function touchPartitionWorker(
  db: Queryable,
  queue: string,
  consumer: string,
  worker: string,
  options: { ttl?: number } = {},
): Promise<string[]> {
  const op = 'touchPartitionWorker';
  names(op, queue, consumer);
  requireName(worker, 'worker', op);
  const ttl = leaseTtl(options.ttl, op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer, worker },
    'select w from pgque.touch_partition_worker($1, $2, $3, $4::interval) as w',
    [queue, consumer, worker, ttl],
  );
  return rows.map((row) => String(row.w));
}

/** `worker` leaves the partitioned consumer's worker list; 1 when it was listed. */
export async function removePartitionWorker(
  db: Queryable,
  queue: string,
  consumer: string,
  worker: string,
): Promise<number> {
  const op = 'removePartitionWorker';
  names(op, queue, consumer);
  requireName(worker, 'worker', op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer, worker },
    'select pgque.remove_partition_worker($1, $2, $3) as r',
    [queue, consumer, worker],
  );
  return Number(rows[0]?.r);
}

/** The engine consumer that is one slot: `<consumer>#<slot>/<slots>`. */
export function slotConsumerName(consumer: string, slot: number, slots: number): string {
  return `${consumer}#${slot}/${slots}`;
}

function names(op: string, queue: string, consumer: string): void {
  requireName(queue, 'queue', op);
  requireName(consumer, 'consumer', op);
}

function slotRef(op: string, holder: Omit<SlotHolder, 'slots'>): void {
  if (holder === null || typeof holder !== 'object') {
    throw new PgqueInvalidInputError(`${op}: expected the slot and its worker`, 'holder', {
      operation: op,
    });
  }
  names(op, holder.queue, holder.consumer);
  requireInteger(holder.slot, 'slot', op, { min: 0, max: MAX_SLOTS - 1 });
  requireName(holder.worker, 'worker', op);
}

function slotHolder(op: string, holder: SlotHolder): void {
  slotRef(op, holder);
  requireInteger(holder.slots, 'slots', op, { min: 1, max: MAX_SLOTS });
}

function context(holder: Omit<SlotHolder, 'slots'>) {
  return {
    queue: holder.queue,
    consumer: holder.consumer,
    slot: holder.slot,
    worker: holder.worker,
  };
}

/** A lease TTL in ms as interval text; at least one second, as the engine requires. */
function leaseTtl(ttl: number | undefined, op: string): string {
  const ms = ttl ?? DEFAULT_LEASE_TTL;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 1_000) {
    throw new PgqueInvalidInputError(
      `${op}: ttl must be a number of milliseconds >= 1000, got ${String(ms)}`,
      'ttl',
      { operation: op },
    );
  }
  return intervalText(ms, 'ttl', op);
}
