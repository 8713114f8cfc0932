import type { RetryDelay } from './backoff.js';
import { PgqueInvalidInputError } from './errors.js';
import type { Logger } from './logger.js';
import { type StandardSchemaV1, validateWithSchema } from './standard-schema.js';
import type { Message } from './statements/consume.js';

/** An event as a handler sees it: the payload parsed from JSON (and by the schema, if any). */
export interface Event<Payload = unknown> {
  id: bigint;
  type: string;
  payload: Payload;
  /** Deliveries before this one: 0 the first time. */
  retryCount: number;
  /** When the event was first sent. */
  createdAt: Date;
  batchId: bigint;
  extras: {
    extra1: string | null;
    extra2: string | null;
    extra3: string | null;
    extra4: string | null;
  };
  /** The message as the engine returned it (raw payload text). */
  message: Message;
}

export interface HandlerContext {
  /**
   * Aborted when the consumer hands its batch back while stopping (`onStop: 'handBack'`).
   * A handler that stops early on it should throw; its event is then handed back too.
   */
  signal: AbortSignal;
  queue: string;
  consumer: string;
  /** The member name for a `CoopConsumer`; null for a normal consumer. */
  subconsumer: string | null;
  logger: Logger;
  /**
   * For a `PartitionedConsumer`: the slot whose batch this is, its slot count, this
   * worker, and the lease epoch it holds the slot under (a takeover raises it).
   */
  partition?: { slot: number; slots: number; worker: string; epoch: bigint };
}

/** Returns (or resolves) when the event is handled; throws to have it retried. */
export type EventHandler<Payload = unknown> = (
  event: Event<Payload>,
  context: HandlerContext,
) => unknown;

/** What became of one event of a batch. */
export type Outcome =
  | { kind: 'done' }
  /** Unknown type under the `'ack'` policy: acked with the batch, no handler ran. */
  | { kind: 'ignored' }
  | { kind: 'nack'; retryAfter: number; reason: string }
  /** Can never succeed (invalid payload): dead-lettered at once. */
  | { kind: 'reject'; reason: string }
  /** Not handled because the batch is being handed back. */
  | { kind: 'unfinished' };

export interface DispatchPolicy {
  unknownHandlerPolicy: 'ack' | 'nack';
  retryDelay: RetryDelay;
}

interface Registration {
  schema: StandardSchemaV1 | undefined;
  handler: EventHandler<unknown>;
}

const MAX_REASON_LENGTH = 2_000;

/** Handlers by event type, each with an optional payload schema. */
export class HandlerRegistry {
  private readonly byType = new Map<string, Registration>();

  register(type: string, schema: StandardSchemaV1 | undefined, handler: EventHandler<never>): void {
    if (typeof type !== 'string' || type === '') {
      throw new PgqueInvalidInputError('handle: event type must be a non-empty string', 'type');
    }
    if (typeof handler !== 'function') {
      throw new PgqueInvalidInputError(
        `handle: the handler for ${type} must be a function`,
        'handler',
      );
    }
    if (this.byType.has(type)) {
      throw new PgqueInvalidInputError(
        `handle: a handler for ${type} is already registered`,
        'type',
      );
    }
    this.byType.set(type, { schema, handler: handler as EventHandler<unknown> });
  }

  get size(): number {
    return this.byType.size;
  }

  /**
   * Runs the handler for one message and says what to do with it: an unknown type is
   * ignored or nacked by policy; a payload that is not JSON or fails its schema is nacked
   * at once (retry 0) with the reason, so it reaches the dead letters after the queue's
   * retries; a handler error is nacked with back-off and the error as the reason.
   */
  async dispatch(
    message: Message,
    policy: DispatchPolicy,
    context: HandlerContext,
  ): Promise<Outcome> {
    const retryCount = message.retryCount ?? 0;
    const registration = this.byType.get(message.type);
    if (!registration) {
      if (policy.unknownHandlerPolicy === 'ack') return { kind: 'ignored' };
      return {
        kind: 'nack',
        retryAfter: policy.retryDelay(retryCount),
        reason: `unknown event type: ${message.type}`,
      };
    }

    let payload: unknown = null;
    if (message.payload !== null) {
      try {
        payload = JSON.parse(message.payload);
      } catch (error) {
        return invalid(message, `not valid JSON (${(error as Error).message})`);
      }
    }
    if (registration.schema) {
      const checked = await validateWithSchema(registration.schema, payload);
      if (!checked.ok) return invalid(message, checked.problem);
      payload = checked.value;
    }

    const event: Event<unknown> = {
      id: message.msgId,
      type: message.type,
      payload,
      retryCount,
      createdAt: message.createdAt,
      batchId: message.batchId,
      extras: {
        extra1: message.extra1,
        extra2: message.extra2,
        extra3: message.extra3,
        extra4: message.extra4,
      },
      message,
    };
    try {
      await registration.handler(event, context);
      return { kind: 'done' };
    } catch (error) {
      if (context.signal.aborted) return { kind: 'unfinished' };
      return {
        kind: 'nack',
        retryAfter: policy.retryDelay(retryCount),
        reason: truncate(
          `handler error: ${error instanceof Error ? error.message : String(error)}`,
        ),
      };
    }
  }
}

function invalid(message: Message, problem: string): Outcome {
  return {
    kind: 'reject',
    reason: truncate(`invalid payload for event type ${message.type}: ${problem}`),
  };
}

function truncate(text: string): string {
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}
