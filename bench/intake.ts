/**
 * Mail intake (issue 23): messages sent over SMTP into `stega cluster` until each is visible
 * through the API as a ticket. Targets on a 2-core machine: >= 200 messages/s, p99 <= 2 s.
 *
 * Workload: N messages of about 20 KB (a text and an HTML part; one in ten with a 200 KB
 * attachment), each from its own sender with its own Message-ID and subject, sent over 8 SMTP
 * connections (one client each, one message after another) to the cluster's mail-in
 * (INBOUND_SMTP_PORT). A reader polls `GET /api/tickets` (newest first, page after page until
 * it reaches tickets it has seen) and stamps each ticket when it first appears. The delay of
 * one message: its ticket's stamp minus the moment its sender got the 250 (the message was
 * committed then). Throughput: messages over the time from the first send to the last ticket
 * seen.
 *
 * Then the memory of one intake process while a 25 MB message streams in: a second mail-in,
 * the built one (`node packages/stega/bin/stega.js mail-in`, as deployed: run `npm run build`
 * first), on its own port against the same database, gets one 25 MB message (a text part and
 * a 24 MB attachment) over SMTP while its VmRSS is read every 5 ms; reported: its resident
 * memory once started, the peak until the sender's 250 (the streaming; target < 150 MB), and
 * the peak until the message is a ticket (filed by this process or the cluster's mail-in,
 * whichever holds the conversation's slot: reported too).
 *
 * Run: `npm run bench -- intake [--quick]` (--quick: 300 messages; BENCH_MESSAGES overrides;
 * BENCH_MESSAGES=0 runs only the 25 MB memory measurement).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { createPool } from '../packages/stega/src/db/pool.js';
import { nodeFlagsFor } from '../packages/stega/src/processes/node-flags.js';
import { spawnStega } from '../packages/stega/test/deploy/processes.js';
import { freePort, startTestServer } from '../test-support/postgres-server.js';
import { withDatabase } from './database.js';
import {
  benchOptions,
  loadAverage,
  machine,
  printTable,
  printTopStatements,
  rate,
  writeResult,
} from './report.js';

const options = benchOptions();
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? (options.quick ? 300 : 5_000));
const CONNECTIONS = 8;
const TOKEN = 'bench-admin-token-0123456789abcdefghij';

delete process.env.DATABASE_URL;
const server = await startTestServer(path.join(os.tmpdir(), 'stega-bench-intake-pg'));
const name = `intake_${process.pid}`;
const admin = createPool(server.adminUrl, 1);
await admin.query(`create database ${name}`);
await admin.end();
const databaseUrl = withDatabase(server.adminUrl, name);
const smtpPort = await freePort();
const httpPort = await freePort();
const cluster = spawnStega(['cluster', '--sla-workers', '1'], {
  DATABASE_URL: databaseUrl,
  PORT: String(httpPort),
  HOST: '127.0.0.1',
  INBOUND_SMTP_PORT: String(smtpPort),
  INBOUND_NEW_TICKETS_PER_SENDER_HOUR: '100000',
  // every new ticket acknowledged, as before the per-mailbox cap: the same work per message
  INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR: '1000000',
  STEGA_ADMIN_TOKEN: TOKEN,
  STEGA_DATA_DIR: path.join(os.tmpdir(), `stega-bench-intake-${process.pid}`),
  LOG_LEVEL: 'warn',
});
const base = `http://127.0.0.1:${httpPort}`;
const api = async (url: string) => {
  const response = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
};
const until = async (what: string, check: () => Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (!cluster.running())
      throw new Error(`the cluster exited:\n${cluster.output().slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};
try {
  await until('the web process', async () => (await fetch(`${base}/healthz`)).ok, 120_000);
  const response = await fetch(`${base}/api/mailboxes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ address: 'support@acme.test', display_name: 'Acme Support' }),
  });
  if (response.status !== 201) throw new Error(`mailbox: ${await response.text()}`);
  const probe = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true });
  await until('the SMTP listener', () => probe.verify(), 120_000);
  probe.close();

  const { summary, loadAfter } =
    MESSAGES > 0 ? await throughput() : { summary: undefined, loadAfter: loadAverage() };
  if (MESSAGES > 0) {
    const db = createPool(databaseUrl, 1);
    await printTopStatements(db).finally(() => db.end());
  }
  const memory = await streamingMemory();
  writeResult('intake', { machine: machine(), loadAfter, summary, memory });
} finally {
  await cluster.stop('SIGTERM', 20_000);
  await server.stop();
}

async function throughput() {
  const paragraph = 'Our printer on the third floor stops after every page and shows E-42. ';
  const text = paragraph.repeat(130); // ~9 KB, and as much again as HTML
  const html = `<html><body>${`<p>${paragraph}</p>`.repeat(120)}</body></html>`;
  const attachment = Buffer.alloc(200 * 1024, 'attachment bytes ');
  const accepted = new Map<number, number>();
  const visible = new Map<number, number>();

  // the reader: stamps each ticket the first time the API shows it
  let reading = true;
  const reader = (async () => {
    while (reading && visible.size < MESSAGES) {
      let cursor: string | null = null;
      for (;;) {
        // pages of 100 (a poll finds a few new tickets; the reader must not load the web
        // process more than a team's list would)
        const page = (await api(
          `/api/tickets?sort=newest&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        )) as { items: { subject: string }[]; next_cursor: string | null };
        const now = performance.now();
        let fresh = 0;
        for (const ticket of page.items) {
          const n = Number(/^Intake (\d+)$/.exec(ticket.subject)?.[1]);
          if (Number.isInteger(n) && !visible.has(n)) {
            visible.set(n, now);
            fresh++;
          }
        }
        // a page with nothing new: older pages were read before (tickets arrive newest first,
        // give or take the filings still in flight, well within a page)
        if (fresh === 0 || !page.next_cursor) break;
        cursor = page.next_cursor;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();

  console.log(`load average before: ${loadAverage()}`);
  const started = performance.now();
  const queue = Array.from({ length: MESSAGES }, (_, i) => i + 1);
  const connection = async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: smtpPort,
      ignoreTLS: true,
      pool: true,
      maxConnections: 1,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    try {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        await transport.sendMail({
          from: `Customer ${n} <customer${n}@customer.test>`,
          to: 'Acme Support <support@acme.test>',
          subject: `Intake ${n}`,
          messageId: `<intake-${n}@customer.test>`,
          text,
          html,
          ...(n % 10 === 0
            ? { attachments: [{ filename: `log-${n}.txt`, content: attachment }] }
            : {}),
        });
        accepted.set(n, performance.now());
      }
    } finally {
      transport.close();
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  const sent = performance.now() - started;
  await until('every ticket visible', async () => visible.size >= MESSAGES, 600_000);
  reading = false;
  await reader;
  const lastSeen = Math.max(...visible.values());
  const loadAfter = loadAverage();
  const delays = [...accepted].map(([n, at]) => (visible.get(n) ?? Number.NaN) - at);
  const sorted = delays.filter(Number.isFinite).sort((a, b) => a - b);
  const pick = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const summary = {
    messages: MESSAGES,
    visible: visible.size,
    'messages/s': rate(MESSAGES, lastSeen - started),
    'sending s': Math.round(sent / 100) / 10,
    'p50 ms': Math.round(pick(0.5)),
    'p99 ms': Math.round(pick(0.99)),
    'max ms': Math.round(sorted.at(-1) ?? 0),
  };
  printTable(`intake: SMTP 250 → visible through the API (load average after: ${loadAfter})`, [
    summary,
  ]);
  return { summary, loadAfter };
}

/** A process's resident memory now (VmRSS), in MiB. */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

async function streamingMemory() {
  const port = await freePort();
  let output = '';
  // with the Node flags it is deployed with (node-flags.ts: stega cluster, Compose, Kubernetes)
  const flags = nodeFlagsFor('mail-in');
  const stega = path.resolve('packages/stega/bin/stega.js');
  const mailIn = spawn(process.execPath, [...flags, stega, 'mail-in'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      INBOUND_SMTP_PORT: String(port),
      LOG_LEVEL: 'info',
      SUBCONSUMER_NAME: 'bench-memory',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-200_000);
  };
  mailIn.stdout.on('data', append);
  mailIn.stderr.on('data', append);
  const pid = mailIn.pid as number;
  try {
    await until(
      'the measured mail-in',
      async () => {
        if (mailIn.exitCode !== null) throw new Error(`mail-in exited:\n${output.slice(-4000)}`);
        return output.includes('mail-in started');
      },
      120_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 2000)); // settle after start
    const atStart = rssMiB(pid);
    let peak = atStart;
    let peakTo250 = atStart;
    let streaming = true;
    const sampler = setInterval(() => {
      const rss = rssMiB(pid);
      peak = Math.max(peak, rss);
      if (streaming) peakTo250 = Math.max(peakTo250, rss);
    }, 5);
    const MB = 1024 * 1024;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true });
    const started = performance.now();
    let info: { response: string };
    try {
      info = await transport.sendMail({
        from: 'Big Sender <big@customer.test>',
        to: 'support@acme.test',
        subject: 'Intake 25 MB',
        messageId: '<intake-25mb@customer.test>',
        text: 'The whole log is attached.',
        // base64 with line breaks grows it by ~37%: 18 MiB of bytes are a ~24.6 MiB message,
        // just under the default limit (INBOUND_MAX_MESSAGE_BYTES, 25 MiB)
        attachments: [{ filename: 'big.log', content: Buffer.alloc(18 * MB, 'log line 42 ok\n') }],
      });
    } finally {
      streaming = false;
      transport.close();
    }
    const sendMs = performance.now() - started;
    await until(
      'the 25 MB message as a ticket',
      async () => {
        const page = (await api('/api/tickets?sort=newest&limit=20')) as {
          items: { subject: string }[];
        };
        return page.items.some((t) => t.subject === 'Intake 25 MB');
      },
      300_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    clearInterval(sampler);
    const filedHere = output.includes('"mail filed"') || output.includes('mail filed');
    const result = {
      'message MiB': Math.round(((await messageBytes()) / MB) * 10) / 10,
      response: info.response.slice(0, 3),
      'send s': Math.round(sendMs / 100) / 10,
      'RSS at start MiB': Math.round(atStart * 10) / 10,
      'peak until 250 MiB': Math.round(peakTo250 * 10) / 10,
      'peak until filed MiB': Math.round(peak * 10) / 10,
      'filed by it': filedHere ? 'yes' : "no (the cluster's mail-in)",
    };
    printTable('intake: one mail-in process while a 25 MB message streams in (target < 150 MB)', [
      result,
    ]);
    return result;
  } finally {
    mailIn.kill('SIGTERM');
    await new Promise((resolve) => mailIn.once('exit', resolve));
  }
}

async function messageBytes(): Promise<number> {
  const pool = createPool(databaseUrl, 1);
  try {
    const { rows } = await pool.query(
      `select size_bytes from stega.inbound_mail where message_key = 'intake-25mb@customer.test'`,
    );
    return Number(rows[0]?.size_bytes ?? 0);
  } finally {
    await pool.end();
  }
}
