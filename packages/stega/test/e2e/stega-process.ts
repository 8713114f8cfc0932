import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../../test-support/postgres-server.js';
import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.ts');

export interface StegaProcess {
  url: string;
  token: string;
  output: () => string;
  api<T = unknown>(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `stega <command>` from source (tsx) as a real process; stops it with SIGINT. It
 * listens on `env.PORT` when given (a test that must know its address first, e.g. for
 * STEGA_PUBLIC_URL), else on a free port.
 */
export async function startStega(
  command: string[],
  env: Record<string, string>,
): Promise<StegaProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-e2e-'));
  const token = 'e2e-admin-token-0123456789abcdefgh';
  let output = '';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', MAIN, ...command], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      STEGA_DATA_DIR: dataDir,
      STEGA_ADMIN_TOKEN: token,
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOWED_NETWORKS: RECEIVER_NETWORKS,
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`stega exited early:\n${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`stega did not answer /healthz in time:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    token,
    output: () => output,
    async api(method, route, body) {
      const response = await fetch(`${url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : null) as never };
    },
    stop(signal = 'SIGINT') {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', (code) => {
          clearTimeout(kill);
          rmSync(dataDir, { recursive: true, force: true });
          resolve(code);
        });
        child.kill(signal);
      });
    },
  };
}
