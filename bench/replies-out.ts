/**
 * Replies out (issue 23): agents' public replies emailed to customers, from the reply's
 * commit to the SMTP server's 250. Target: p99 <= 1 s for 1,000 replies on a 2-core machine.
 *
 * Workload: N tickets of one mailbox, each with the customer's message in its thread (as mail
 * intake leaves them); then one public reply per ticket by an agent through the HTTP API
 * (`app.inject`: auth, validation, the reply's transaction with its ledger row, the send after
 * the commit), 8 at a time. The receiver is the test SMTP sink (smtp-server on 127.0.0.1,
 * accepting at once), which stamps each message when it has it all; Stega's sender keeps a
 * pool of SMTP connections. The delay of one reply: the sink's stamp minus the reply's
 * `recorded_at` (its transaction's clock, just before the commit: a slight overestimate).
 *
 * Run: `npm run bench -- replies-out [--quick]` (--quick: 200 replies; BENCH_CLIENTS=1: one
 * reply at a time, the delay without any queue).
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../packages/stega/src/config.js';
import { migrate } from '../packages/stega/src/db/migrate.js';
import { createPool } from '../packages/stega/src/db/pool.js';
import { buildApp } from '../packages/stega/src/http/app.js';
import { createLogger } from '../packages/stega/src/log.js';
import { eventually } from '../test-support/eventually.js';
import { startTestServer } from '../test-support/postgres-server.js';
import { startSmtpSink } from '../test-support/smtp-sink.js';
import { withDatabase } from './database.js';
import { benchOptions, loadAverage, machine, printTable, rate, writeResult } from './report.js';

const options = benchOptions();
const REPLIES = options.quick ? 200 : 1_000;
/** Replies posted at once (BENCH_CLIENTS, default 8). */
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const TOKEN = 'bench-admin-token-0123456789abcdefghij';

delete process.env.DATABASE_URL;
const server = await startTestServer(path.join(os.tmpdir(), 'stega-bench-replies-pg'));
const sink = await startSmtpSink();
const name = `replies_${process.pid}`;
const admin = createPool(server.adminUrl, 1);
await admin.query(`create database ${name}`);
await admin.end();
const pool = createPool(withDatabase(server.adminUrl, name), 10);
await migrate(pool, { coopPageSize: 50 });
const config = loadConfig(
  {
    STEGA_ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'silent',
    STEGA_DATA_DIR: os.tmpdir(),
    SMTP_URL: process.env.BENCH_SMTP_QUERY
      ? `${sink.url}?${process.env.BENCH_SMTP_QUERY}`
      : sink.url,
  },
  os.tmpdir(),
);
const app = await buildApp({ pool, config, logger: createLogger('silent', 'bench') });

const agentId = Number(
  (
    await pool.query(
      `insert into stega.agents (name, email) values ('Ana Sousa', 'ana@acme.test') returning id`,
    )
  ).rows[0]?.id,
);
const mailboxId = Number(
  (
    await pool.query(
      `insert into stega.mailboxes (address, display_name) values ('support@acme.test', 'Acme Support')
       returning id`,
    )
  ).rows[0]?.id,
);
const { rows: tickets } = await pool.query(
  `with t as (
     insert into stega.tickets (subject, requester_name, requester_email, priority, mailbox_id)
     select 'Printer ' || g, 'Customer ' || g, 'customer' || g || '@customer.test', 'normal', $2
       from generate_series(1, $1) as g
     returning id)
   insert into stega.mail_thread_ids (message_key, ticket_id, direction)
   select 'in-' || t.id || '@customer.test', t.id, 'in' from t
   returning ticket_id`,
  [REPLIES, mailboxId],
);
const ticketIds = tickets.map((row) => Number(row.ticket_id));

console.log(`load average before: ${loadAverage()}`);
const started = performance.now();
const queue = [...ticketIds];
const client = async () => {
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    const answer = await app.inject({
      method: 'POST',
      url: `/api/tickets/${id}/comments`,
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { body: `We are on it (ticket ${id}).`, agent_id: agentId },
    });
    if (answer.statusCode !== 201) throw new Error(`reply to ${id}: ${answer.body}`);
  }
};
await Promise.all(Array.from({ length: CLIENTS }, client));
const posted = performance.now() - started;
await eventually(() => sink.messages.length >= REPLIES, `${REPLIES} replies at the sink`, {
  timeoutMs: 300_000,
  intervalMs: 100,
});
const elapsed = performance.now() - started;
const loadAfter = loadAverage();

const { rows } = await pool.query(
  `select payload ->> 'message_id' as message_id, payload ->> 'recorded_at' as recorded_at,
          status, attempts
     from stega.alert_deliveries where channel = 'customer_email'`,
);
const arrived = new Map(sink.messages.map((m) => [m.header('message-id'), m.at]));
const delays = rows
  .map((row) => (arrived.get(row.message_id) ?? Number.NaN) - Date.parse(row.recorded_at))
  .filter(Number.isFinite)
  .sort((a, b) => a - b);
const pick = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? 0;
const summary = {
  replies: REPLIES,
  received: sink.messages.length,
  'replies/s': rate(REPLIES, elapsed),
  'posting ms': Math.round(posted),
  'p50 ms': Math.round(pick(0.5)),
  'p99 ms': Math.round(pick(0.99)),
  'max ms': Math.round(delays.at(-1) ?? 0),
  retried: rows.filter((row) => Number(row.attempts) > 1).length,
};
printTable(`replies out: commit → the sink's 250 (load average after: ${loadAfter})`, [summary]);
writeResult('replies-out', { machine: machine(), loadAfter, summary });

await app.close();
await pool.end();
await sink.stop();
await server.stop();
