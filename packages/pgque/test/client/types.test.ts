import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type {
  Client,
  Consumer,
  CoopConsumer,
  Event,
  Message,
  PgqueRuntime,
  Queryable,
  receive,
  receiveCoop,
  StandardSchemaV1,
  send,
  sendBatch,
  ticker,
} from '../../src/index.js';

// Type-level checks of the public API; they run in `tsc`, the bodies never execute.
describe('public types', () => {
  it('types ids as bigint and messages as Message', () => {
    expectTypeOf<typeof send>().returns.resolves.toEqualTypeOf<bigint>();
    expectTypeOf<typeof sendBatch>().returns.resolves.toEqualTypeOf<bigint[]>();
    expectTypeOf<typeof receiveCoop>().returns.resolves.toEqualTypeOf<Message[]>();
    expectTypeOf<typeof ticker>().returns.resolves.toEqualTypeOf<bigint | null>();
    expectTypeOf<Message['batchId']>().toEqualTypeOf<bigint>();
    expectTypeOf<typeof receive>().returns.resolves.toEqualTypeOf<Message[]>();
    expectTypeOf<Parameters<typeof send>[0]>().toEqualTypeOf<Queryable>();
    // Client is a runtime; its bookkeeping of running services is not part of its type
    expectTypeOf<Client>().toExtend<PgqueRuntime>();
    expectTypeOf<Client>().not.toHaveProperty('serviceStarted');
    expectTypeOf<Client>().not.toHaveProperty('newConsumer');
    // the engine's calls are the statement functions, not methods of the client
    expectTypeOf<Client>().not.toHaveProperty('send');
    expectTypeOf<Client>().not.toHaveProperty('receive');
    expectTypeOf<ConstructorParameters<typeof Consumer>[0]>().toEqualTypeOf<PgqueRuntime>();
    expectTypeOf<ConstructorParameters<typeof CoopConsumer>[0]>().toEqualTypeOf<PgqueRuntime>();
  });

  it('infers the payload type from a Standard Schema (zod 4)', () => {
    const Paid = z.object({ orderId: z.number(), note: z.string().default('') });
    expectTypeOf(Paid).toExtend<StandardSchemaV1>();
    const check = (consumer: Consumer) =>
      consumer
        .handle('order.paid', Paid, (event) => {
          expectTypeOf(event.payload).toEqualTypeOf<{ orderId: number; note: string }>();
          expectTypeOf(event.id).toEqualTypeOf<bigint>();
        })
        .handle<{ raw: true }>('raw', (event) => {
          expectTypeOf(event).toEqualTypeOf<Event<{ raw: true }>>();
        });
    expectTypeOf(check).returns.toEqualTypeOf<Consumer>();
  });
});
