// Cooperative consumers with real OS processes: each worker (fixtures/coop-worker.ts) is a
// separate Node process with its own connection. The parent steers them through tables
// and watches the engine's own view (get_consumer_info, the subscription rows).
// Covers issue 3's "what it must show": K-process exactly-once drain, SIGKILL takeover,
// SIGSTOP stall with a late ack, heartbeat, and lock behaviour under explicit transactions.
import { describe, expect, it } from 'vitest';
import { countBy, workerProcesses } from './process-harness.js';
import { mustSub, newQueue, receiveCoop, rows, value } from './support.js';

const {
  pool,
  spawnWorker,
  waitFor,
  newRun,
  setState,
  waitReady,
  finish,
  backlog,
  registerGroup,
  done,
  acks,
  drained,
  heldBatch,
  snapshot,
} = await workerProcesses();

describe('cooperative consumers: real processes', () => {
  it.each([2, 4, 8])(
    '%i worker processes drain a backlog over many ticks: each event once, every member busy',
    async (k) => {
      const q = await newQueue(pool);
      const members = Array.from({ length: k }, (_, i) => `w${i + 1}`);
      const c = await registerGroup(q, members);
      const ids = await backlog(q, 6 * k, 20);
      const run = await newRun();
      const workers = members.map((member) =>
        spawnWorker({ run, queue: q, group: c, member, delayMs: 2 }),
      );
      await waitReady(run, workers);
      await setState(run, 'go');
      await waitFor(workers, 'backlog drained', () => drained(q, c, run, ids), 90_000);
      await finish(run, workers);

      const processed = await done(run);
      const counts = countBy(processed, (d) => d.msg_id);
      expect([...counts.keys()].sort()).toEqual([...ids].sort());
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      const perMember = countBy(processed, (d) => d.member);
      expect([...perMember.keys()].sort()).toEqual([...members].sort());
      // each batch went to one member, and every ack finished a batch
      const batchOwners = new Map<string, Set<string>>();
      for (const d of processed) {
        batchOwners.set(d.batch_id, (batchOwners.get(d.batch_id) ?? new Set()).add(d.member));
      }
      expect([...batchOwners.values()].filter((owners) => owners.size !== 1)).toEqual([]);
      const acked = await acks(run);
      expect(acked.map((a) => a.result).filter((r) => r !== 1)).toEqual([]);
      expect(new Set(acked.map((a) => a.batch_id))).toEqual(new Set(batchOwners.keys()));
    },
    150_000,
  );

  it('a SIGKILLed member loses its batch after dead_interval; duplicates come only from that batch', async () => {
    const q = await newQueue(pool);
    const members = ['w1', 'w2', 'w3'];
    const c = await registerGroup(q, members);
    const ids = await backlog(q, 12, 10);
    const run = await newRun();
    const common = { run, queue: q, group: c, touchMs: 200, deadInterval: '2 seconds' };
    // the victim is slow (3 s per batch) but heartbeats, so it is robbed only once dead
    const victim = spawnWorker({ ...common, member: 'w1', delayMs: 300 });
    const others = ['w2', 'w3'].map((member) => spawnWorker({ ...common, member, delayMs: 30 }));
    const workers = [victim, ...others];
    await waitReady(run, workers);
    await setState(run, 'go');

    const batch = await heldBatch(q, c, run, 'w1', workers);
    const window = (
      await rows<{ ev_id: string }>(pool, 'select ev_id from pgque.get_batch_events($1)', [batch])
    ).map((e) => e.ev_id);
    victim.doomed = true;
    victim.child.kill('SIGKILL');
    expect((await victim.exit).signal).toBe('SIGKILL');
    // killed mid-batch: it never acked, and still holds the batch until someone takes it
    expect(
      await value<number>(
        pool,
        'select count(*)::int from coop_acks where run = $1 and batch_id = $2',
        [run, batch],
      ),
    ).toBe(0);

    await waitFor(workers, 'backlog drained after the crash', () => drained(q, c, run, ids));
    await finish(run, workers);

    const processed = await done(run);
    const counts = countBy(processed, (d) => d.msg_id);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    const victimPartial = processed
      .filter((d) => d.member === 'w1' && d.batch_id === batch)
      .map((d) => d.msg_id);
    // exactly the messages the victim recorded before dying were processed twice
    expect(victimPartial.length).toBeGreaterThanOrEqual(1);
    expect(duplicates.sort()).toEqual([...victimPartial].sort());
    expect(Math.max(...counts.values())).toBe(2);
    for (const id of duplicates) expect(window).toContain(id);
    // the whole window was taken over by a live member under a new batch id
    const takeover = processed.filter((d) => window.includes(d.msg_id) && d.member !== 'w1');
    expect(takeover.map((d) => d.msg_id).sort()).toEqual([...window].sort());
    expect(new Set(takeover.map((d) => d.batch_id)).size).toBe(1);
    expect(takeover[0]?.batch_id).not.toBe(batch);
    // no live member was robbed: every ack finished its batch
    expect((await acks(run)).filter((a) => a.result !== 1)).toEqual([]);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBeNull();
    console.info(`crash takeover: ${duplicates.length} duplicate(s) out of ${ids.length} events`);
  }, 120_000);

  it('a SIGSTOPped member is robbed; after SIGCONT its late ack returns 0 and changes nothing', async () => {
    const q = await newQueue(pool);
    const c = await registerGroup(q, ['w1', 'w2']);
    const ids = await backlog(q, 1, 10);
    const run = await newRun();
    const base = { run, queue: q, group: c };
    const stalled = spawnWorker({
      ...base,
      member: 'w1',
      delayMs: 300,
      touchMs: 200,
      maxBatches: 1,
    });
    await waitReady(run, [stalled]);
    await setState(run, 'go');
    const batch = await heldBatch(q, c, run, 'w1', [stalled]);
    const window = await mustSub(pool, q, `${c}.w1`);
    stalled.child.kill('SIGSTOP');

    // the taker asks with dead_interval 2 s, heartbeats, and holds its ack until released
    const taker = spawnWorker({
      ...base,
      member: 'w2',
      deadInterval: '2 seconds',
      touchMs: 200,
      gateAck: true,
    });
    const workers = [stalled, taker];
    await waitFor(workers, 'w2 took the batch over and processed it', async () => {
      const recorded = await value<number>(
        pool,
        `select count(*)::int from coop_done where run = $1 and member = 'w2'`,
        [run],
      );
      return recorded === ids.length;
    });
    const owner = await mustSub(pool, q, `${c}.w2`);
    expect(owner.sub_batch).not.toBeNull();
    expect(owner.sub_batch).not.toBe(batch);
    expect([owner.sub_last_tick, owner.sub_next_tick]).toEqual([
      window.sub_last_tick,
      window.sub_next_tick,
    ]);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBeNull();

    const before = await snapshot(q);
    stalled.child.kill('SIGCONT');
    expect((await stalled.exit).code).toBe(0);
    expect((await acks(run)).map((a) => [a.member, a.batch_id, a.result])).toEqual([
      ['w1', batch, 0],
    ]);
    expect(await snapshot(q)).toEqual(before);

    await pool.query(`insert into coop_gate (run, member) values ($1, 'w2')`, [run]);
    await waitFor(workers, 'w2 acked', async () => (await acks(run)).length === 2);
    await waitFor(workers, 'drained', () => drained(q, c, run, ids));
    await finish(run, [taker]);
    expect((await acks(run)).map((a) => [a.member, a.batch_id, a.result])).toEqual([
      ['w1', batch, 0],
      ['w2', owner.sub_batch, 1],
    ]);
    // w2 processed every event once; the stalled member's records are the only repeats
    const processed = await done(run);
    expect(
      processed
        .filter((d) => d.member === 'w2')
        .map((d) => d.msg_id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(processed.filter((d) => d.member === 'w1').every((d) => d.batch_id === batch)).toBe(
      true,
    );
  }, 120_000);

  it.each([
    ['with a heartbeat keeps', true],
    ['without a heartbeat loses', false],
  ])(
    'a slow member %s its batch beyond dead_interval while a rival asks with it',
    async (_, touching) => {
      const q = await newQueue(pool);
      const c = await registerGroup(q, ['w1', 'w2', 'probe']);
      const ids = await backlog(q, 1, 12);
      const run = await newRun();
      const base = { run, queue: q, group: c };
      // 12 × 500 ms: the batch is held about 6 s, three times the dead_interval
      const slow = spawnWorker({
        ...base,
        member: 'w1',
        delayMs: 500,
        touchMs: touching ? 200 : null,
        maxBatches: 1,
      });
      await waitReady(run, [slow]);
      await setState(run, 'go');
      const batch = await heldBatch(q, c, run, 'w1', [slow]);
      const rival = spawnWorker({ ...base, member: 'w2', deadInterval: '2 seconds' });
      const workers = [slow, rival];

      if (touching) {
        // the parent also asks, as member 'probe', once the batch is older than dead_interval
        await waitFor(workers, 'w1 holding its batch for more than 2 s', async () => {
          const age = await value<number | null>(
            pool,
            `select extract(epoch from clock_timestamp() - min(at))::float8
               from coop_done where run = $1 and batch_id = $2`,
            [run, batch],
          );
          return age !== null && age > 2.2;
        });
        expect(await receiveCoop(pool, q, c, 'probe', 100, '2 seconds')).toEqual([]);
        expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBe(batch);
        // and w1 has not acked yet: its ack (below) comes after the probe was refused
        expect(
          await value<number>(
            pool,
            'select count(*)::int from coop_acks where run = $1 and batch_id = $2',
            [run, batch],
          ),
        ).toBe(0);
      }
      expect((await slow.exit).code).toBe(0);
      await waitFor(workers, 'drained', () => drained(q, c, run, ids));
      await finish(run, workers);

      const [slowAck, ...rest] = (await acks(run)).filter((a) => a.member === 'w1');
      expect(rest).toEqual([]);
      expect(slowAck?.batch_id).toBe(batch);
      const byRival = (await done(run)).filter((d) => d.member === 'w2');
      // the engine's takeover log says whether the batch outlived dead_interval unheard
      const takeovers = await rows<{ old_subconsumer: string; new_subconsumer: string }>(
        pool,
        `select old_subconsumer, new_subconsumer
           from pgque.get_coop_takeovers($1, $2) where old_batch_id = $3`,
        [q, c, batch],
      );
      if (touching) {
        expect(slowAck?.result).toBe(1);
        expect(byRival).toEqual([]);
        expect(takeovers).toEqual([]);
      } else {
        expect(slowAck?.result).toBe(0);
        expect(byRival.map((d) => d.msg_id).sort()).toEqual([...ids].sort());
        expect(takeovers).toEqual([{ old_subconsumer: 'w1', new_subconsumer: 'w2' }]);
      }
    },
    120_000,
  );

  it('two worker processes allocating inside held transactions never share a batch nor deadlock', async () => {
    const q = await newQueue(pool);
    const c = await registerGroup(q, ['w1', 'w2']);
    const ids = await backlog(q, 20, 5);
    const run = await newRun();
    const workers = ['w1', 'w2'].map((member) =>
      spawnWorker({ run, queue: q, group: c, member, holdMs: 30 }),
    );
    await waitReady(run, workers);
    await setState(run, 'go');
    await waitFor(workers, 'drained', () => drained(q, c, run, ids));
    await finish(run, workers);
    const processed = await done(run);
    expect(processed.map((d) => d.msg_id).sort()).toEqual([...ids].sort());
    const acked = await acks(run);
    expect(acked).toHaveLength(20);
    expect(new Set(acked.map((a) => a.batch_id)).size).toBe(20);
    expect(acked.every((a) => a.result === 1)).toBe(true);
  }, 120_000);
});
