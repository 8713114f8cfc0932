import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import {
  BITS,
  canReach,
  createPostgresServer,
  postgresUser,
  type RunAs,
  reachableBase,
} from './postgres-server.js';

/** A PostgreSQL 17 server kept in a data directory of the project, for `stega start`. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DATABASE = 'stega';
const SUPERUSER = 'postgres';
/** The superuser's password before it was kept in PASSWORD_FILE (installs before 0.2). */
const LEGACY_PASSWORD = 'postgres';
/** In the data directory, mode 0600: the embedded superuser's random password. */
export const PASSWORD_FILE = 'postgres-password';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object'
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes the lock file a killed server left behind, so the next start succeeds. */
function clearStaleLock(dataDir: string): void {
  const lock = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(lock)) return;
  const pid = Number(fs.readFileSync(lock, 'utf8').split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} is already running (pid ${pid}); stop the other Stega first`,
    );
  }
  fs.rmSync(lock, { force: true });
}

/**
 * Where the cluster lives: `<dataDir>/postgres`, or where that symlink points. As root,
 * when user postgres cannot reach dataDir (a clone in a mode-700 directory), a new cluster
 * goes to /var/lib/stega/<hash of dataDir>/postgres and `<dataDir>/postgres` becomes a
 * symlink to it.
 */
function clusterDirectory(dataDir: string, user: RunAs | undefined, log: (msg: string) => void) {
  const link = path.join(dataDir, 'postgres');
  const stat = fs.lstatSync(link, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink()) return path.resolve(dataDir, fs.readlinkSync(link));
  if (stat || !user || canReach(dataDir, user, BITS.search)) {
    if (stat && user && !canReach(link, user, BITS.read | BITS.write | BITS.search)) {
      throw new Error(
        `user ${user.name}, which runs PostgreSQL for root, cannot reach ${link}: run Stega as a normal user, clone it outside a private directory, or set DATABASE_URL`,
      );
    }
    return link;
  }
  const base = canReach('/var/lib', user, BITS.search)
    ? '/var/lib/stega'
    : path.join(reachableBase(user), 'stega-data');
  const key = createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 16);
  const external = path.join(base, key, 'postgres');
  fs.mkdirSync(path.dirname(external), { recursive: true, mode: 0o755 });
  fs.chmodSync(base, 0o755);
  fs.chmodSync(path.dirname(external), 0o755);
  fs.symlinkSync(external, link);
  log(
    `user ${user.name} (PostgreSQL runs as it for root) cannot reach ${dataDir}: the embedded database lives in ${external}, ${link} points there`,
  );
  return external;
}

function readPassword(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function writePassword(file: string, password: string): void {
  fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

/** Connects as the superuser; undefined when the password is refused. */
async function connectAs(port: number, password: string): Promise<pg.Client | undefined> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: SUPERUSER,
    password,
    database: 'postgres',
  });
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => {});
    if ((error as { code?: string }).code === '28P01') return undefined; // invalid_password
    throw error;
  }
}

/**
 * Starts (and on first use creates) the embedded server in `<dataDir>/postgres`, on a free
 * port of 127.0.0.1, with database `stega`. Its superuser's password is random, kept in
 * `<dataDir>/postgres-password` (0600); a cluster made before that (password `postgres`)
 * gets one at its first start.
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  log: (msg: string) => void,
): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true });
  const user = postgresUser();
  const databaseDir = clusterDirectory(dataDir, user, log);
  const passwordFile = path.join(dataDir, PASSWORD_FILE);
  let password = readPassword(passwordFile);
  if (!password) {
    password = randomBytes(24).toString('hex');
    writePassword(passwordFile, password);
  }
  const port = await freePort();
  const server = await createPostgresServer({
    dataDir: databaseDir,
    user: SUPERUSER,
    password,
    port,
    onLog: (line) => {
      // errors are the clients' to report (and a legacy password's refusal is expected)
      if (/\b(FATAL|PANIC):/.test(line) && !line.includes('password authentication')) {
        log(`embedded postgres: ${line}`);
      }
    },
  });
  const fresh = !fs.existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) {
    log(`creating an embedded PostgreSQL in ${databaseDir}`);
    await server.initialise();
  } else {
    clearStaleLock(databaseDir);
  }
  await server.start();
  try {
    let admin = await connectAs(port, password);
    if (!admin) {
      // made before the password was random: move it to the kept one
      admin = await connectAs(port, LEGACY_PASSWORD);
      if (!admin) {
        throw new Error(
          `the embedded PostgreSQL in ${databaseDir} refuses the password in ${passwordFile}`,
        );
      }
      await admin.query(`alter role ${SUPERUSER} with password ${admin.escapeLiteral(password)}`);
      log(`the embedded PostgreSQL's superuser password is now random (kept in ${passwordFile})`);
    }
    try {
      const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [
        DATABASE,
      ]);
      if (!rowCount) await admin.query(`create database ${DATABASE}`);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`,
    stop: () => server.stop(),
  };
}
