/**
 * One subconsumer process of the cooperative benchmarks (coop-scaling, coop-paging), driven
 * by bench/coop-members.ts over an IPC channel: it connects, warms up, says `ready`, then
 * for every `{ type: 'go', queue }` runs receive_coop + handler + ack on that queue until
 * the group has no window left for it and reports what it did (`done`). `stop` (or the
 * parent going away) ends it.
 *
 * argv: <database url> <group> <subconsumer> <handler delay ms per event> <warm-up queue>
 */
import pg from 'pg';

export type WorkerCommand = { type: 'go'; queue: string } | { type: 'stop' };

export interface WorkerReport {
  type: 'done';
  queue: string;
  subconsumer: string;
  events: number;
  batches: number;
  /** Sum of msg_ids seen, so the parent can check every event was handled once. */
  idSum: string;
  minBatch: number;
  maxBatch: number;
}

const argv = process.argv.slice(2);
if (argv.length !== 5 || argv.some((arg) => !arg)) {
  throw new Error('usage: coop-worker <url> <group> <subconsumer> <delay-ms> <warm-queue>');
}
const [url, group, subconsumer, delayArg, warmQueue] = argv as [
  string,
  string,
  string,
  string,
  string,
];
const delay = Number(delayArg);
/** Above any window the benchmarks send: an ack would skip events past receive's limit. */
const MAX_RETURN = 1_000_000;
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

/** Commands in arrival order; `stop` when the parent disconnects. */
const inbox: WorkerCommand[] = [];
let wake: (() => void) | undefined;
process.on('message', (command: WorkerCommand) => {
  inbox.push(command);
  wake?.();
});
process.on('disconnect', () => {
  inbox.push({ type: 'stop' });
  wake?.();
});
async function nextCommand(): Promise<WorkerCommand> {
  while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
  return inbox.shift() as WorkerCommand;
}

async function drain(client: pg.Client, queue: string): Promise<WorkerReport> {
  let events = 0;
  let batches = 0;
  let idSum = 0n;
  let minBatch = Number.POSITIVE_INFINITY;
  let maxBatch = 0;
  for (;;) {
    const { rows } = await client.query<{ msg_id: string; batch_id: string; payload: string }>(
      'select msg_id, batch_id, payload from pgque.receive_coop($1, $2, $3, $4)',
      [queue, group, subconsumer, MAX_RETURN],
    );
    // The benchmarks' backlogs have no empty windows and are fully ticked before `go`, so
    // no rows means nothing is left for this member (a paged window's last pages may still
    // be held by siblings).
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
  return {
    type: 'done',
    queue,
    subconsumer,
    events,
    batches,
    idSum: idSum.toString(),
    minBatch: batches ? minBatch : 0,
    maxBatch,
  };
}

async function main() {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // A call on a queue with nothing to give, so the first timed call does not pay for
  // compiling the engine's functions in this new backend. The pid keeps processes that
  // share a subconsumer name (one per concurrently measured group) apart.
  await client.query('select * from pgque.receive_coop($1, $2, $3)', [
    warmQueue,
    'warm',
    `${subconsumer}_${process.pid}`,
  ]);
  await send({ type: 'ready' });
  for (;;) {
    const command = await nextCommand();
    if (command.type === 'stop') break;
    await send(await drain(client, command.queue));
  }
  await client.end();
  if (process.connected) process.disconnect();
}

main().catch((error) => {
  console.error(`coop-worker ${subconsumer}:`, error);
  process.exit(1);
});
