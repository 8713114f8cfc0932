/**
 * Paged cooperative split (issue 6): how fast a group of member processes drains one burst
 * of events sent in a single transaction (one send_batch of 10,000, then one tick: one tick
 * window), with and without `coop_page_size`.
 *
 * - 5 ms handler: drain time with 1, 2, 4 and 8 members, unpaged (the whole window goes to
 *   one member) against pages of 50 and 100 events. Target: paged at least 3x faster than
 *   unpaged with 4 members.
 * - no-op handler: drain time with pages of 10, 50, 100 and 1,000 events against unpaged,
 *   for 1 and 4 members, and the cost of a page: (paged - unpaged) / (pages - 1), paired
 *   within each run.
 *
 * Members are OS processes (bench/coop-members.ts), spawned once per configuration and
 * reused by its runs. The 5 ms configurations are bound by their handler's waits, not by
 * CPU: an unpaged one takes 10,000 x 5 ms whatever the member count, so one at a time they
 * would take ~20 minutes. By default each run therefore drains all of them at once, each
 * on its own queue and group; BENCH_COOP_SEQUENTIAL=1 drains them one at a time instead.
 * The no-op configurations are CPU-bound and always run one at a time.
 *
 * Public SQL API only. Run: `npm run bench -- coop-paging [--quick] [--runs N]`.
 */
import { spawnSync } from 'node:child_process';
import type pg from 'pg';
import {
  checkExactlyOnce,
  createWarmQueue,
  type Drain,
  type Members,
  startMembers,
} from './coop-members.js';
import { benchQueueName, connect, startBenchServer } from './database.js';
import {
  benchOptions,
  loadAverage,
  machine,
  median,
  payload,
  printTable,
  rate,
  writeResult,
} from './report.js';

const GROUP = 'bench';
const DELAY_MS = 5;
const SLOW_MEMBERS = [1, 2, 4, 8];
const SLOW_PAGES = [null, 50, 100];
const NOOP_MEMBERS = [1, 4];
const NOOP_PAGES = [null, 10, 50, 100, 1000];
/** Page size of the per-page cost by window size (1 member, no-op). */
const WINDOW_PAGE = 100;
const TARGET = { members: 4, speedup: 3 };

interface Config {
  handler: 'no-op' | '5 ms';
  members: number;
  /** null: unpaged. */
  pageSize: number | null;
  /** Events in the burst (its one window). */
  events: number;
}

interface Measured {
  millis: number;
  /** Batches handed out: pages, or 1 for an unpaged window. */
  batches: number;
  perMember: { subconsumer: string; events: number; batches: number }[];
}

const label = (config: Config) =>
  `${config.handler}, ${config.events} events, ${config.members} member(s), ${config.pageSize === null ? 'unpaged' : `pages of ${config.pageSize}`}`;
const same = (a: Config, b: Partial<Config>) =>
  Object.entries(b).every(([key, value]) => a[key as keyof Config] === value);
/** The configuration of `configs` that matches `wanted` (they are Map keys). */
function find(configs: Iterable<Config>, wanted: Partial<Config>): Config {
  for (const config of configs) if (same(config, wanted)) return config;
  throw new Error(`no configuration ${JSON.stringify(wanted)}`);
}
const pagesOf = (events: number, pageSize: number | null) =>
  pageSize === null ? 1 : Math.ceil(events / pageSize);

/**
 * A queue whose group (members w1..wN, paged or not) has exactly one window ahead of it:
 * `config.events` events sent by one send_batch in one transaction, then one tick.
 */
async function burst(client: pg.Client, config: Config) {
  const queue = benchQueueName('p');
  await client.query('select pgque.create_queue($1)', [queue]);
  for (let m = 1; m <= config.members; m++) {
    await client.query('select pgque.subscribe_subconsumer($1, $2, $3)', [queue, GROUP, `w${m}`]);
  }
  if (config.pageSize !== null) {
    await client.query(`select pgque.set_consumer_config($1, $2, 'coop_page_size', $3)`, [
      queue,
      GROUP,
      String(config.pageSize),
    ]);
  }
  const payloads = Array.from({ length: config.events }, (_, i) => payload(i));
  const { rows } = await client.query<{ ids: string[] }>(
    'select pgque.send_batch($1::text, $2::text, $3::text[]) as ids',
    [queue, 'bench', payloads],
  );
  const idSum = (rows[0]?.ids ?? []).reduce((sum, id) => sum + BigInt(id), 0n);
  await client.query('select pgque.force_next_tick($1)', [queue]);
  const tick = await client.query('select pgque.ticker($1) as tick', [queue]);
  if (tick.rows[0].tick === null) throw new Error(`no tick on ${queue}`);
  return { queue, idSum };
}

function measured(drain: Drain): Measured {
  return {
    millis: Math.round(drain.millis * 10) / 10,
    batches: drain.reports.reduce((sum, r) => sum + r.batches, 0),
    perMember: drain.reports.map((r) => ({
      subconsumer: r.subconsumer,
      events: r.events,
      batches: r.batches,
    })),
  };
}

/** Sends a burst for each configuration, drains them (all at once or in turn), checks them. */
async function measure(
  client: pg.Client,
  groups: Map<Config, Members>,
  together: boolean,
): Promise<Map<Config, Measured>> {
  const out = new Map<Config, Measured>();
  const one = async (config: Config, queue: string, idSum: bigint) => {
    const drain = await (groups.get(config) as Members).drain(queue);
    checkExactlyOnce(drain, config.events, idSum);
    const batches = drain.reports.reduce((sum, r) => sum + r.batches, 0);
    if (batches !== pagesOf(config.events, config.pageSize)) {
      throw new Error(
        `${label(config)}: ${batches} batches, expected ${pagesOf(config.events, config.pageSize)}`,
      );
    }
    out.set(config, measured(drain));
  };
  const queues: string[] = [];
  try {
    if (together) {
      const bursts = [];
      for (const config of groups.keys()) {
        const b = await burst(client, config);
        queues.push(b.queue);
        bursts.push({ config, ...b });
      }
      await Promise.all(bursts.map((b) => one(b.config, b.queue, b.idSum)));
    } else {
      for (const config of groups.keys()) {
        const b = await burst(client, config);
        queues.push(b.queue);
        await one(config, b.queue, b.idSum);
      }
    }
  } finally {
    for (const queue of queues) await client.query('select pgque.drop_queue($1, true)', [queue]);
  }
  return out;
}

/** Runs every configuration `runs` times, members spawned once per configuration. */
async function runAll(
  url: string,
  client: pg.Client,
  configs: Config[],
  options: { runs: number; together: boolean },
): Promise<Map<Config, Measured[]>> {
  const groups = new Map<Config, Members>();
  const results = new Map<Config, Measured[]>(configs.map((config) => [config, []]));
  try {
    for (const config of configs) {
      const names = Array.from({ length: config.members }, (_, i) => `w${i + 1}`);
      groups.set(
        config,
        await startMembers(url, GROUP, names, config.handler === '5 ms' ? DELAY_MS : 0),
      );
    }
    // Runs outermost, so drifting machine load touches every configuration alike.
    for (let r = 0; r < options.runs; r++) {
      const run = await measure(client, groups, options.together);
      for (const config of configs) {
        const m = run.get(config) as Measured;
        results.get(config)?.push(m);
        console.log(`  ${label(config)}, run ${r + 1}: ${m.millis} ms, ${m.batches} batch(es)`);
      }
    }
  } finally {
    await Promise.all([...groups.values()].map((group) => group.close()));
  }
  return results;
}

/** Least-squares line y = intercept + slope x through [x, y] points. */
function lineFit(points: [number, number][]): { slope: number; intercept: number } {
  const n = points.length;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  const slope = sxx === 0 ? Number.NaN : sxy / sxx;
  return { slope, intercept: my - slope * mx };
}

/** The run whose drain time is the median one (for the per-member spread). */
function typical(all: Measured[]): Measured {
  return [...all].sort((a, b) => a.millis - b.millis)[Math.floor(all.length / 2)] as Measured;
}

function spread(m: Measured, key: 'events' | 'batches'): string {
  const values = m.perMember.map((p) => p[key]);
  return `${Math.min(...values)}-${Math.max(...values)}`;
}

function engineRevision(): string {
  const git = (...args: string[]) => spawnSync('git', args, { encoding: 'utf8' }).stdout.trim();
  const head = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--', 'packages/pgque/sql') !== '';
  return head ? `${head}${dirty ? ' + uncommitted changes in packages/pgque/sql' : ''}` : 'unknown';
}

async function main() {
  const options = benchOptions();
  const events = options.quick ? 1_000 : 10_000;
  const together = process.env.BENCH_COOP_SEQUENTIAL !== '1';
  const load: Record<string, string> = { before: loadAverage() };
  console.log(
    `coop-paging: ${options.runs} run(s) per figure, bursts of ${events.toLocaleString('en-US')} events; 5 ms configurations ${together ? 'drained all at once' : 'one at a time'}; load ${load.before}`,
  );
  const server = await startBenchServer();
  try {
    const settings = await server.describe();
    const url = await server.freshDatabase();
    const client = await connect(url);
    try {
      await createWarmQueue(client);

      // --- no-op handler: the cost of a page ---
      const windowSizes = [events / 10, events, events * 3];
      const noopConfigs = [
        ...NOOP_MEMBERS.flatMap((members) =>
          NOOP_PAGES.map((pageSize): Config => ({ handler: 'no-op', members, pageSize, events })),
        ),
        ...windowSizes
          .filter((size) => size !== events)
          .flatMap((size) =>
            [null, WINDOW_PAGE].map(
              (pageSize): Config => ({ handler: 'no-op', members: 1, pageSize, events: size }),
            ),
          ),
      ];
      const noop = await runAll(url, client, noopConfigs, { ...options, together: false });
      load.afterNoop = loadAverage();
      const noopRow = (config: Config) => {
        const all = noop.get(config) ?? [];
        const base = noop.get(
          find(noopConfigs, { members: config.members, events: config.events, pageSize: null }),
        ) as Measured[];
        const pages = pagesOf(config.events, config.pageSize);
        const perPage =
          config.pageSize === null || pages < 2
            ? null
            : median(
                all.map((m, r) => ((m.millis - (base[r] as Measured).millis) * 1000) / (pages - 1)),
              );
        const millis = median(all.map((m) => m.millis));
        return {
          ...config,
          pages,
          millis,
          runs: all.map((m) => m.millis),
          eventsPerSec: rate(config.events, millis),
          microsPerPage: perPage === null ? null : Math.round(perPage),
          eventsPerMember: spread(typical(all), 'events'),
          allRuns: all,
        };
      };
      const noopRows = noopConfigs.filter((c) => c.events === events).map(noopRow);
      const windowRows = windowSizes.flatMap((size) =>
        [null, WINDOW_PAGE].map((pageSize) =>
          noopRow(find(noopConfigs, { members: 1, events: size, pageSize })),
        ),
      );
      const fits = NOOP_MEMBERS.map((members) => {
        const rows = noopRows.filter((row) => row.members === members);
        const unpaged = rows.find((row) => row.pageSize === null)?.millis ?? Number.NaN;
        const { slope, intercept } = lineFit(
          rows.filter((row) => row.pageSize !== null).map((row) => [row.pages, row.millis]),
        );
        return {
          members,
          microsPerPage: Math.round(slope * 1000),
          windowOverheadMillis: Math.round((intercept - unpaged) * 10) / 10,
        };
      });
      printTable(
        `No-op handler: one ${events.toLocaleString('en-US')}-event transaction (median of ${options.runs}); µs per page = (paged - unpaged) / (pages - 1), paired per run`,
        noopRows.map((row) => ({
          members: row.members,
          'page size': row.pageSize ?? 'unpaged',
          pages: row.pages,
          'drain ms': row.millis,
          runs: row.runs.join(' / '),
          'ev/s': row.eventsPerSec,
          'µs per page': row.microsPerPage ?? '-',
          'events/member min-max': row.eventsPerMember,
        })),
      );
      printTable(
        `No-op handler, 1 member: the cost of a page of ${WINDOW_PAGE} by the size of the window it is cut from (median of ${options.runs})`,
        windowRows.map((row) => ({
          'window events': row.events,
          'page size': row.pageSize ?? 'unpaged',
          pages: row.pages,
          'drain ms': row.millis,
          runs: row.runs.join(' / '),
          'µs per page': row.microsPerPage ?? '-',
        })),
      );
      printTable(
        'No-op handler: least-squares line through the paged drain times, drain ms = a + b x pages',
        fits.map((fit) => ({
          members: fit.members,
          'b: µs per page': fit.microsPerPage,
          'a - unpaged drain: ms per window': fit.windowOverheadMillis,
        })),
      );

      // --- 5 ms handler: drain time, paged against unpaged ---
      const slowConfigs = SLOW_PAGES.flatMap((pageSize) =>
        SLOW_MEMBERS.map((members): Config => ({ handler: '5 ms', members, pageSize, events })),
      );
      load.beforeSlow = loadAverage();
      const slow = await runAll(url, client, slowConfigs, { ...options, together });
      const slowOf = (members: number, pageSize: number | null) =>
        slow.get(find(slowConfigs, { members, pageSize })) as Measured[];
      const slowRows = slowConfigs.map((config) => {
        const all = slowOf(config.members, config.pageSize);
        const millis = median(all.map((m) => m.millis));
        const unpaged = median(slowOf(config.members, null).map((m) => m.millis));
        const single = median(slowOf(1, config.pageSize).map((m) => m.millis));
        return {
          ...config,
          millis,
          runs: all.map((m) => m.millis),
          speedupOverUnpaged: unpaged / millis,
          scalingEfficiency: single / (config.members * millis),
          eventsPerMember: spread(typical(all), 'events'),
          pagesPerMember: spread(typical(all), 'batches'),
          allRuns: all,
        };
      });
      printTable(
        `Handler waits ${DELAY_MS} ms per event: one ${events.toLocaleString('en-US')}-event transaction (median of ${options.runs}); ideal 1-member drain ${((events * DELAY_MS) / 1000).toFixed(0)} s`,
        slowRows.map((row) => ({
          members: row.members,
          'page size': row.pageSize ?? 'unpaged',
          'drain s': row.millis / 1000,
          runs: row.runs.map((ms) => (ms / 1000).toFixed(2)).join(' / '),
          'x unpaged': row.speedupOverUnpaged,
          'efficiency vs 1 member': row.scalingEfficiency,
          'events/member min-max': row.eventsPerMember,
          'batches/member min-max': row.pagesPerMember,
        })),
      );
      const verdicts = SLOW_PAGES.filter((p) => p !== null).map((pageSize) => {
        const row = slowRows.find((r) => r.members === TARGET.members && r.pageSize === pageSize);
        const speedup = row?.speedupOverUnpaged ?? 0;
        return { pageSize, speedup, met: speedup >= TARGET.speedup };
      });
      for (const v of verdicts) {
        console.log(
          `target: ${TARGET.members} members, pages of ${v.pageSize}: ${v.speedup.toFixed(2)}x unpaged (target >= ${TARGET.speedup}x): ${v.met ? 'met' : 'NOT met'}`,
        );
      }
      load.after = loadAverage();
      console.log(
        `\nload average (1/5/15 min): before ${load.before}, after no-op ${load.afterNoop}, before 5 ms ${load.beforeSlow}, after ${load.after}`,
      );
      writeResult('coop-paging', {
        benchmark: 'coop-paging',
        takenAt: new Date().toISOString(),
        quick: options.quick,
        runsPerFigure: options.runs,
        events,
        handlerDelayMs: DELAY_MS,
        slowConfigurationsDrained: together ? 'all at once' : 'one at a time',
        engine: engineRevision(),
        machine: machine(),
        loadAverage: load,
        postgres: { embedded: server.embedded, ...settings },
        target: { ...TARGET, verdicts },
        noop: noopRows,
        noopFit: fits,
        noopByWindow: windowRows,
        slow: slowRows,
      });
    } finally {
      await client.end();
    }
  } finally {
    await server.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
