import { type ChildProcess, spawn } from 'node:child_process';
import type { Logger } from '../log.js';
import { nodeFlagsFor } from './node-flags.js';
import type { RunningService } from './service.js';

/** Restart delay after a child died unexpectedly: 1 s, doubling, at most 30 s. */
const backoff = (crashes: number) => Math.min(30_000, 1000 * 2 ** Math.min(crashes, 5));

/**
 * Runs `count` copies of a `stega <command>` as child processes, each in its own process
 * group (Ctrl-C reaches only the parent, which stops them in order) and with an IPC
 * channel (a child whose parent vanished stops by itself). A child that dies is
 * restarted with back-off. `stop` sends SIGTERM and waits; SIGKILL after `graceMs`.
 * With `metricsPort`, the child in slot i serves its metrics on METRICS_PORT metricsPort + i.
 * Each child starts with its command's Node flags (node-flags.ts).
 */
export function superviseChildren(
  command: string,
  count: number,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  options: { graceMs?: number; metricsPort?: number | undefined } = {},
): RunningService & { pids(): number[] } {
  const graceMs = options.graceMs ?? 20_000;
  const children = new Map<number, ChildProcess>();
  let stopping = false;

  const launch = (slot: number, crashes: number) => {
    const metricsPort = options.metricsPort === undefined ? undefined : options.metricsPort + slot;
    const argv = [...process.execArgv, ...nodeFlagsFor(command), process.argv[1] ?? '', command];
    const child = spawn(process.execPath, argv, {
      env: metricsPort === undefined ? env : { ...env, METRICS_PORT: String(metricsPort) },
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.set(slot, child);
    logger.info({ command, pid: child.pid, slot, metricsPort }, 'child started');
    const startedAt = Date.now();
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const crashesNow = Date.now() - startedAt > 60_000 ? 0 : crashes + 1;
      const delay = backoff(crashesNow);
      logger.warn(
        { command, pid: child.pid, code, signal, restartInMs: delay },
        'child exited; restarting',
      );
      setTimeout(() => !stopping && launch(slot, crashesNow), delay).unref();
    });
  };
  for (let slot = 0; slot < count; slot++) launch(slot, 0);

  return {
    name: `${command} x${count}`,
    pids: () => [...children.values()].map((child) => child.pid ?? 0),
    stop: async () => {
      stopping = true;
      await Promise.all(
        [...children.values()].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
              child.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
