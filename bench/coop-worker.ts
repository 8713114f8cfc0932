/**
 * One subconsumer process of the coop-scaling benchmark. Spawned by bench/coop-scaling.ts
 * with an IPC channel: it connects, says `ready`, waits for `go`, then receive_coop +
 * handler + ack until the group has no window left, and reports what it did.
 *
 * argv: <database url> <queue> <group> <subconsumer> <handler delay ms per event>
 *       <warm-up queue>
 */
import pg from 'pg';

export interface WorkerReport {
  type: 'done';
  subconsumer: string;
  events: number;
  batches: number;
  /** Sum of msg_ids seen, so the parent can check every event was handled once. */
  idSum: string;
  minBatch: number;
  maxBatch: number;
}

const argv = process.argv.slice(2);
if (argv.length !== 6 || argv.some((arg) => !arg)) {
  throw new Error('usage: coop-worker <url> <queue> <group> <subconsumer> <delay-ms> <warm-queue>');
}
const [url, queue, group, subconsumer, delayArg, warmQueue] = argv as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const delay = Number(delayArg);
const send = (message: object) =>
  new Promise<void>((resolve, reject) =>
    process.send
      ? process.send(message, (error: Error | null) => (error ? reject(error) : resolve()))
      : reject(new Error('no IPC channel')),
  );
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function handle(_payload: string) {
  if (delay > 0) await sleep(delay);
}

async function main() {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // A call on a queue with nothing to give, so the first timed call does not pay for
  // compiling the engine's functions in this new backend.
  await client.query('select * from pgque.receive_coop($1, $2, $3)', [
    warmQueue,
    'warm',
    subconsumer,
  ]);
  const go = new Promise<void>((resolve) => {
    process.once('message', () => resolve());
  });
  await send({ type: 'ready' });
  await go;

  let events = 0;
  let batches = 0;
  let idSum = 0n;
  let minBatch = Number.POSITIVE_INFINITY;
  let maxBatch = 0;
  for (;;) {
    const { rows } = await client.query<{ msg_id: string; batch_id: string; payload: string }>(
      'select msg_id, batch_id, payload from pgque.receive_coop($1, $2, $3, $4)',
      [queue, group, subconsumer, 10_000],
    );
    // The backlog has no empty windows, so no rows means no window is left for the group.
    if (rows.length === 0) break;
    for (const row of rows) {
      await handle(row.payload);
      idSum += BigInt(row.msg_id);
    }
    await client.query('select pgque.ack($1)', [rows[0]?.batch_id]);
    events += rows.length;
    batches++;
    minBatch = Math.min(minBatch, rows.length);
    maxBatch = Math.max(maxBatch, rows.length);
  }
  await client.end();
  const report: WorkerReport = {
    type: 'done',
    subconsumer,
    events,
    batches,
    idSum: idSum.toString(),
    minBatch: batches ? minBatch : 0,
    maxBatch,
  };
  await send(report);
  process.disconnect?.();
}

main().catch((error) => {
  console.error(`coop-worker ${subconsumer}:`, error);
  process.exit(1);
});
