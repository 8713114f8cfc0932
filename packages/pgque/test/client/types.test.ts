import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type {
  Client,
  Consumer,
  CoopConsumer,
  Event,
  Message,
  StandardSchemaV1,
} from '../../src/index.js';

// Type-level checks of the public API; they run in `tsc`, the bodies never execute.
describe('public types', () => {
  it('types ids as bigint and messages as Message', () => {
    expectTypeOf<Client['send']>().returns.resolves.toEqualTypeOf<bigint>();
    expectTypeOf<Client['sendBatch']>().returns.resolves.toEqualTypeOf<bigint[]>();
    expectTypeOf<Client['receive']>().returns.resolves.toEqualTypeOf<Message[]>();
    expectTypeOf<Client['receiveCoop']>().returns.resolves.toEqualTypeOf<Message[]>();
    expectTypeOf<Client['ticker']>().returns.resolves.toEqualTypeOf<bigint | null>();
    expectTypeOf<Message['batchId']>().toEqualTypeOf<bigint>();
    expectTypeOf<Client['newConsumer']>().returns.toEqualTypeOf<Consumer>();
    expectTypeOf<Client['newCoopConsumer']>().returns.toEqualTypeOf<CoopConsumer>();
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
