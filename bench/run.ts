/**
 * Runs the benchmarks, each in its own process with its own PostgreSQL, one after another.
 *
 *   npm run bench                          every benchmark
 *   npm run bench -- coop-scaling          one (or several) by name
 *   npm run bench -- --quick --runs 1      options are passed to each benchmark
 *
 * Results: a table on stdout and bench/results/<name>.json per benchmark.
 * DATABASE_URL measures another server; BENCH_PREINSTALLED=1 also skips installing our
 * engine there (see bench/database.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const BENCHMARKS = [
  'queue-throughput',
  'coop-scaling',
  'coop-paging',
  'partitions',
  'send-idem',
  'latency',
  'delivery-throughput',
  'alert-lateness',
  'ticket-lists',
  'replies-out',
  'intake',
  'ticket-detail',
  'on-call',
  'page-people',
];
const VALUE_OPTIONS = new Set(['--runs']);

const args = process.argv.slice(2);
const names: string[] = [];
const options: string[] = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i] as string;
  if (arg.startsWith('-')) {
    options.push(arg);
    // `--runs 1` keeps its value; other options are flags or use `--name=value`.
    if (VALUE_OPTIONS.has(arg) && args[i + 1] !== undefined) options.push(args[++i] as string);
  } else if (BENCHMARKS.includes(arg)) {
    names.push(arg);
  } else {
    console.error(`unknown benchmark: ${arg} (known: ${BENCHMARKS.join(', ')})`);
    process.exit(2);
  }
}
const selected = names.length > 0 ? names : BENCHMARKS;

let failed = 0;
for (const name of selected) {
  const script = path.join(here, `${name}.ts`);
  if (!existsSync(script)) {
    console.log(`\n== ${name}: not written yet (bench/${name}.ts), skipped`);
    continue;
  }
  console.log(`\n== ${name}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', script, ...options], {
    cwd: path.resolve(here, '..'),
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    failed++;
    console.error(`== ${name} failed (${result.status ?? result.signal})`);
  }
}
process.exit(failed ? 1 : 0);
