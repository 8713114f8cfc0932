import { Writable } from 'node:stream';
import pino from 'pino';
import { expect, expectTypeOf, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { Consumer, connect, createQueue, type Logger, silentLogger } from '../../src/index.js';

it('takes a pino logger as is, for the client and its services', async () => {
  expectTypeOf(pino()).toExtend<Logger>();
  expectTypeOf(pino().child({ component: 'x' })).toExtend<Logger>();
  expectTypeOf(silentLogger).toExtend<Logger>();

  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const { url } = await createTestDatabase();
  const client = await connect(url, { logger });
  const queue = randomName();
  await createQueue(client.pool, queue);
  const consumer = new Consumer(client, queue, 'logged');
  await consumer.start();
  await eventually(() => lines.some((l) => l.msg === 'consumer started'), 'the start line');
  expect(lines.find((l) => l.msg === 'consumer started')).toMatchObject({
    queue,
    consumer: 'logged',
    level: 30,
  });
  // close() stops the running consumer first
  await client.close();
  expect(consumer.running).toBe(false);
  expect(lines.some((l) => l.msg === 'consumer stopped')).toBe(true);
});
