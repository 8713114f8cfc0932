/**
 * Ticket detail (issue 24): one ticket with 5,000 comments of 20,000 characters, read as the
 * ticket page reads it, from a real `stega web` process over HTTP.
 *
 * - size: the body of `GET /api/tickets/{id}` as sent without compression and as sent to a
 *   browser (`Accept-Encoding: gzip, deflate, br`);
 * - detail p50 / p99: 30 sequential reads (after 3 warm-up ones) as a browser sends them;
 *   and the page's 3-second refetch of an unchanged ticket (If-None-Match with the last ETag);
 * - /healthz under load: 8 readers read the detail back to back for 15 s while /healthz is
 *   asked every 100 ms; its p50, p99 and worst answer times, and the reads done;
 * - the web process's resident memory (VmRSS) once started, before the load (after the
 *   sequential reads), its peak during it, and after.
 *
 * The web process and `stega migrate` run from BENCH_STEGA_ROOT (default: this checkout), so
 * the same script measures another tree, e.g. a worktree of main for the "before" figures:
 *   BENCH_STEGA_ROOT=/path/to/main-checkout npm run bench -- ticket-detail
 * Only the HTTP API and SQL inserts are used, so it runs against older trees too.
 *
 * Run: `npm run bench -- ticket-detail [--quick]` (--quick: 300 comments, 5 s of load).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool } from '../packages/stega/src/db/pool.js';
import { freePort, startTestServer } from '../test-support/postgres-server.js';
import { withDatabase } from './database.js';
import { benchOptions, loadAverage, machine, median, printTable, writeResult } from './report.js';

const options = benchOptions();
const COMMENTS = options.quick ? 300 : 5_000;
const COMMENT_CHARS = 20_000;
const READERS = 8;
const LOAD_MS = options.quick ? 5_000 : 15_000;
const SEQUENTIAL = 30;
const TOKEN = 'bench-admin-token-0123456789abcdefghij';
const BROWSER_ENCODINGS = 'gzip, deflate, br';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(process.env.BENCH_STEGA_ROOT ?? path.join(here, '..'));
const MAIN = path.join(root, 'packages/stega/src/main.ts');
const revision =
  spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], {
    encoding: 'utf8',
  }).stdout.trim() || 'unknown';

delete process.env.DATABASE_URL;
const server = await startTestServer(path.join(os.tmpdir(), 'stega-bench-detail-pg'));
const name = `detail_${process.pid}`;
const admin = createPool(server.adminUrl, 1);
await admin.query(`create database ${name}`);
await admin.end();
const url = withDatabase(server.adminUrl, name);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-bench-detail-'));
const env = {
  ...process.env,
  DATABASE_URL: url,
  STEGA_DATA_DIR: dataDir,
  STEGA_ADMIN_TOKEN: TOKEN,
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
};

const migrated = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'migrate'], {
  cwd: root,
  env,
  stdio: 'inherit',
});
if (migrated.status !== 0) throw new Error(`stega migrate failed (${migrated.status})`);

/** One ticket, its comments (hex words: compressible about as well as prose) and their activity. */
async function seed(): Promise<number> {
  const pool = createPool(url, 2);
  try {
    const { rows } = await pool.query(
      `insert into stega.tickets (subject, description, requester_name, requester_email,
                                  priority, status, created_at, updated_at)
       values ('A very long conversation', 'It started small.', 'Rui', 'rui@bench.test',
               'normal', 'open', now() - interval '30 days', now())
       returning id`,
    );
    const ticketId = Number(rows[0]?.id);
    for (let from = 1; from <= COMMENTS; from += 500) {
      const to = Math.min(COMMENTS, from + 499);
      await pool.query(
        `insert into stega.ticket_comments (ticket_id, author_name, body, public_reply, created_at)
         select $1, 'Agent ' || (i % 7),
                left(string_agg(md5(i::text || ':' || w::text), ' '), $4),
                i % 3 <> 0, now() - interval '30 days' + make_interval(secs => i * 60)
           from generate_series($2::int, $3::int) i, generate_series(1, $4 / 32 + 1) w
          group by i`,
        [ticketId, from, to, COMMENT_CHARS],
      );
    }
    await pool.query(
      `insert into stega.ticket_activity (ticket_id, at, actor, action, details)
       select $1, c.created_at, c.author_name, 'commented',
              jsonb_build_object('comment_id', c.id, 'public_reply', c.public_reply,
                                 'agent_id', null, 'first_response', false)
         from stega.ticket_comments c where c.ticket_id = $1`,
      [ticketId],
    );
    await pool.query('analyze stega.ticket_comments');
    await pool.query('analyze stega.ticket_activity');
    return ticketId;
  } finally {
    await pool.end();
  }
}

interface Answer {
  status: number;
  /** Bytes on the wire (after any compression). */
  bytes: number;
  ms: number;
  etag: string | undefined;
}

/** A GET over a fresh connection, read to its end; the body is counted, never parsed. */
function get(port: number, route: string, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: route, headers, agent: false },
      (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            bytes,
            ms: performance.now() - started,
            etag: response.headers.etag,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kib / 1024) * 10) / 10;
}

async function startWeb(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'web'], {
    cwd: root,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`stega web exited (${child.exitCode})`);
    const answer = await get(port, '/healthz').catch(() => undefined);
    if (answer?.status === 200) return child;
    if (Date.now() > deadline) throw new Error('stega web did not answer /healthz in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

console.log(`tree: ${root} (${revision}); load average before: ${loadAverage()}`);
const seedStart = performance.now();
const ticketId = await seed();
console.log(
  `seeded 1 ticket with ${COMMENTS} comments of ${COMMENT_CHARS} characters in ${Math.round((performance.now() - seedStart) / 1000)} s`,
);
const port = await freePort();
const web = await startWeb(port);
const rssAtStart = rssMiB(web.pid as number);
const auth = { authorization: `Bearer ${TOKEN}` };
const detail = `/api/tickets/${ticketId}`;
try {
  const plain = await get(port, detail, auth);
  if (plain.status !== 200) throw new Error(`${detail}: ${plain.status}`);
  const browser = { ...auth, 'accept-encoding': BROWSER_ENCODINGS };
  const compressed = await get(port, detail, browser);
  for (let i = 0; i < 3; i++) await get(port, detail, browser);
  const reads: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) reads.push((await get(port, detail, browser)).ms);
  const revalidations: number[] = [];
  let unchanged = 0;
  if (compressed.etag) {
    for (let i = 0; i < SEQUENTIAL; i++) {
      const answer = await get(port, detail, { ...browser, 'if-none-match': compressed.etag });
      if (answer.status === 304) unchanged++;
      revalidations.push(answer.ms);
    }
  }

  // 8 readers back to back; /healthz every 100 ms; RSS every 100 ms
  const rssBefore = rssMiB(web.pid as number);
  let rssPeak = rssBefore;
  let loadReads = 0;
  const health: number[] = [];
  const until = performance.now() + LOAD_MS;
  const readers = Array.from({ length: READERS }, async () => {
    while (performance.now() < until) {
      await get(port, detail, browser);
      loadReads++;
    }
  });
  const probe = (async () => {
    while (performance.now() < until) {
      health.push((await get(port, '/healthz')).ms);
      rssPeak = Math.max(rssPeak, rssMiB(web.pid as number));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  await Promise.all([...readers, probe]);
  const rssAfter = rssMiB(web.pid as number);

  const figures = {
    tree: revision,
    comments: COMMENTS,
    comment_chars: COMMENT_CHARS,
    detail_bytes_uncompressed: plain.bytes,
    detail_bytes_to_browser: compressed.bytes,
    detail_p50_ms: Math.round(median(reads) * 10) / 10,
    detail_p99_ms: Math.round(percentile(reads, 99) * 10) / 10,
    unchanged_304: `${unchanged}/${revalidations.length}`,
    unchanged_p50_ms: revalidations.length ? Math.round(median(revalidations) * 10) / 10 : NaN,
    healthz_p50_ms: Math.round(median(health) * 10) / 10,
    healthz_p99_ms: Math.round(percentile(health, 99) * 10) / 10,
    healthz_max_ms: Math.round(Math.max(...health) * 10) / 10,
    detail_reads_under_load: loadReads,
    rss_at_start_mib: rssAtStart,
    rss_before_mib: rssBefore,
    rss_peak_mib: rssPeak,
    rss_after_mib: rssAfter,
    rss_growth_mib: Math.round((rssPeak - rssAtStart) * 10) / 10,
  };
  printTable(
    `ticket detail, ${COMMENTS} comments × ${COMMENT_CHARS} chars, tree ${revision}`,
    Object.entries(figures).map(([figure, value]) => ({ figure, value })),
  );
  console.log(`load average after: ${loadAverage()}`);
  writeResult('ticket-detail', { machine: machine(), figures, loadAverageAfter: loadAverage() });
} finally {
  web.kill('SIGINT');
  await new Promise((resolve) => web.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
  await server.stop();
}
