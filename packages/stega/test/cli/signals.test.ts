import { type ChildProcess, spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../../test-support/postgres-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** Every process below `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '); // not a zombie
  } catch {
    return false;
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** `npm start`, as a person or a process manager runs it, with its own data directory. */
async function npmStart(dataDir: string) {
  const port = await freePort();
  // the npm running this suite when there is one (npm test), else npm on PATH
  const npm = process.env.npm_execpath;
  const [file, args] = npm?.endsWith('.js')
    ? [process.execPath, [npm, 'start']]
    : ['npm', ['start']];
  const { DATABASE_URL: _url, ...env } = process.env;
  let output = '';
  const child: ChildProcess = spawn(file, args, {
    cwd: ROOT,
    env: {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      STEGA_DATA_DIR: dataDir,
      STEGA_ADMIN_TOKEN: 'signals-admin-token-0123456789abcdef',
      SLA_WORKERS: '2',
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await expect
    .poll(
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
        return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok;
      },
      { timeout: 90_000, interval: 200 },
    )
    .toBe(true);
  const lock = readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n');
  return {
    pid: child.pid as number,
    port,
    databasePort: Number(lock[3]),
    exited,
    output: () => output,
  };
}

describe('signals to npm start', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-signals-'));
  afterAll(() => {
    const link = path.join(dataDir, 'postgres');
    if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) {
      rmSync(path.dirname(readlinkSync(link)), { recursive: true, force: true });
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cases: { signal: NodeJS.Signals; to: 'npm' | 'stega' }[] = [
    { signal: 'SIGTERM', to: 'npm' },
    { signal: 'SIGINT', to: 'npm' },
    { signal: 'SIGTERM', to: 'stega' },
    { signal: 'SIGINT', to: 'stega' },
  ];
  for (const { signal, to } of cases) {
    it(`${signal} to the ${to} process stops every process, and nothing listens afterwards`, async () => {
      const started = await npmStart(dataDir);
      expect(await listening(started.port)).toBe(true);
      expect(await listening(started.databasePort)).toBe(true);
      const tree = descendants(started.pid);
      // npm, stega start, the embedded PostgreSQL's runner and server, two workers
      expect(tree.length).toBeGreaterThanOrEqual(5);
      const stega = tree.find((pid) => commandLine(pid).includes('stega.js start'));
      expect(stega).toBeDefined();
      process.kill(to === 'npm' ? started.pid : (stega as number), signal);
      await started.exited;
      await expect
        .poll(() => [started.pid, ...tree].filter(alive), { timeout: 60_000, interval: 100 })
        .toEqual([]);
      expect(await listening(started.port)).toBe(false);
      expect(await listening(started.databasePort)).toBe(false);
      expect(started.output()).toContain('"msg":"stopped"');
    });
  }
});
