// The paged cooperative split with real worker processes (issue 6): one transaction of
// 5,000 events shared evenly by 4 members, against the unpaged split that gives the whole
// window to one member; and a SIGKILLed member's page taken over with nothing lost.
import { describe, expect, it } from 'vitest';
import { countBy, workerProcesses } from './process-harness.js';
import { groupName, newQueue, rows, tick, value } from './support.js';

const {
  pool,
  spawnWorker,
  waitFor,
  newRun,
  setState,
  waitReady,
  finish,
  done,
  drained,
  heldBatch,
} = await workerProcesses();

const EVENTS = 5000;
const MEMBERS = ['w1', 'w2', 'w3', 'w4'];

/** A group of MEMBERS with the given page size, and one committed transaction of `events` events. */
async function oneBigWindow(pageSize: number | null, events: number) {
  const q = await newQueue(pool);
  const c = groupName();
  await pool.query('select pgque.subscribe($1, $2)', [q, c]);
  if (pageSize !== null) {
    await pool.query(`select pgque.set_consumer_config($1, $2, 'coop_page_size', $3)`, [
      q,
      c,
      String(pageSize),
    ]);
  }
  for (const m of MEMBERS)
    await pool.query('select pgque.register_subconsumer($1, $2, $3, true)', [q, c, m]);
  const payloads = Array.from({ length: events }, (_, i) => `e${i}`);
  const ids = await value<string[]>(pool, `select pgque.send_batch($1, 'job', $2::text[])`, [
    q,
    payloads,
  ]);
  await tick(pool, q);
  return { q, c, ids };
}

async function drainWith(pageSize: number | null) {
  const { q, c, ids } = await oneBigWindow(pageSize, EVENTS);
  const run = await newRun();
  const workers = MEMBERS.map((member) =>
    spawnWorker({ run, queue: q, group: c, member, delayMs: 1, pollMs: 20 }),
  );
  await waitReady(run, workers);
  await setState(run, 'go');
  await waitFor(workers, 'the window drained', () => drained(q, c, run, ids), 120_000);
  await finish(run, workers);
  const processed = await done(run);
  const perEvent = countBy(processed, (d) => d.msg_id);
  expect(perEvent.size).toBe(EVENTS);
  expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
  const perMember = countBy(processed, (d) => d.member);
  const pages = [...countBy(processed, (d) => d.batch_id).values()];
  return { shares: MEMBERS.map((m) => perMember.get(m) ?? 0), pages };
}

describe('paged cooperative split: real processes', () => {
  it('4 members share one 5,000-event transaction: 100 pages of 50, every member takes pages', async () => {
    // counts, not timing: how evenly the pages spread depends on the machine's load
    const { shares, pages } = await drainWith(50);
    expect(pages).toHaveLength(EVENTS / 50);
    expect(pages.every((size) => size === 50)).toBe(true);
    for (const share of shares) {
      expect(share).toBeGreaterThan(0);
      expect(share % 50).toBe(0);
    }
  }, 150_000);

  it('without paging the same window goes to a single member (the imbalance paging removes)', async () => {
    const { shares, pages } = await drainWith(null);
    expect(pages).toEqual([EVENTS]);
    expect(shares.filter((share) => share > 0)).toEqual([EVENTS]);
  }, 150_000);

  it("a SIGKILLed member's page is taken over; nothing lost, duplicates only from that page", async () => {
    const { q, c, ids } = await oneBigWindow(20, 400);
    const run = await newRun();
    const workers = MEMBERS.slice(0, 3).map((member) =>
      spawnWorker({
        run,
        queue: q,
        group: c,
        member,
        delayMs: 30,
        pollMs: 50,
        deadInterval: '2 seconds',
      }),
    );
    await waitReady(run, workers);
    await setState(run, 'go');
    const victim = workers[0];
    if (!victim) throw new Error('no worker');
    const page = await heldBatch(q, c, run, victim.member, workers);
    victim.doomed = true;
    victim.child.kill('SIGKILL');
    await victim.exit;
    const survivors = workers.slice(1);
    await waitFor(
      survivors,
      'everything processed after the takeover',
      () => drained(q, c, run, ids),
      90_000,
    );
    await finish(run, survivors);

    const processed = await done(run);
    const perEvent = countBy(processed, (d) => d.msg_id);
    expect([...perEvent.keys()].sort()).toEqual([...ids].sort());
    const duplicated = [...perEvent.entries()].filter(([, n]) => n > 1).map(([id]) => id);
    const pageEvents = new Set(processed.filter((d) => d.batch_id === page).map((d) => d.msg_id));
    expect(duplicated.length).toBeGreaterThan(0);
    expect(duplicated.every((id) => pageEvents.has(id))).toBe(true);
    const log = await rows(pool, 'select * from pgque.get_coop_takeovers($1, $2)', [q, c]);
    expect(log).toContainEqual(
      expect.objectContaining({ old_subconsumer: victim.member, old_batch_id: page }),
    );
  }, 150_000);
});
