import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';

/** packages/stega/src/main.ts: tests run `stega` from source with tsx. */
export const STEGA_MAIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../src/main.ts',
);

/** Output kept per process; older output is dropped (a chaos run logs a lot). */
const OUTPUT_LIMIT = 4_000_000;

export interface StegaChild {
  /** What it runs, e.g. `sla-breach-worker`. */
  command: string;
  pid: number;
  child: ChildProcess;
  /** stdout and stderr so far (the newest OUTPUT_LIMIT characters). */
  output(): string;
  /** The pino JSON lines of output() (other lines skipped). */
  logs(): Record<string, unknown>[];
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM (or `signal`), SIGKILL after `graceMs`; resolves when it has exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

const live = new Set<StegaChild>();
let exitHookInstalled = false;

/**
 * Runs `stega <args>` from source as a real process in its own process group (so a
 * signal for the test runner never reaches it by accident). Every child is remembered
 * and `killAllChildren` (or the test process exiting) kills the ones still running; one
 * left behind anyway stops when its IPC channel to this process closes.
 */
export function spawnStega(args: string[], env: Record<string, string | undefined>): StegaChild {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const child of live) hardKill(child);
    });
  }
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', STEGA_MAIN, ...args], {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOWED_NETWORKS: RECEIVER_NETWORKS,
      ...env,
    } as NodeJS.ProcessEnv,
    // an IPC channel: a child whose test process died (and never ran its afterAll) sees
    // the channel close and stops by itself (`untilSignal` listens for it)
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    detached: true,
  });
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > OUTPUT_LIMIT) output = output.slice(output.length - OUTPUT_LIMIT / 2);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(handle);
      resolve({ code, signal });
    }),
  );
  const handle: StegaChild = {
    command: args.join(' '),
    pid: child.pid ?? 0,
    child,
    output: () => output,
    logs: () => parseLogs(output),
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    signal: (signal) => {
      if (handle.running()) child.kill(signal);
    },
    async stop(signal = 'SIGTERM', graceMs = 30_000) {
      if (!handle.running()) return;
      child.kill('SIGCONT'); // a stopped process cannot handle SIGTERM
      child.kill(signal);
      const timer = setTimeout(() => hardKill(handle), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  live.add(handle);
  return handle;
}

function hardKill(child: StegaChild): void {
  try {
    child.child.kill('SIGCONT');
    child.child.kill('SIGKILL');
  } catch {
    // already gone
  }
}

/** SIGKILLs every child still running and waits for them: for afterAll. */
export async function killAllChildren(): Promise<void> {
  const children = [...live];
  for (const child of children) hardKill(child);
  await Promise.all(children.map((child) => child.exited));
}

export function parseLogs(output: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by the output limit
    }
  }
  return lines;
}

/** Whether a process with this pid exists (a zombie counts as gone only once reaped). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
