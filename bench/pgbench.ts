import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * pgbench, when installed (Debian's postgresql-client ships it), drives the same SQL from a
 * C client, which shows how much of a figure is the engine and how much is node-pg.
 * PGBENCH names the binary; BENCH_PGBENCH=0 turns it off.
 */
export function pgbenchBinary(): string | null {
  if (process.env.BENCH_PGBENCH === '0') return null;
  const binary = process.env.PGBENCH ?? 'pgbench';
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? binary : null;
}

/** Runs `script` `transactions` times on each of `clients` connections; returns tps. */
export async function pgbench(
  url: string,
  script: string,
  clients: number,
  transactions: number,
): Promise<number> {
  const binary = pgbenchBinary();
  if (!binary) throw new Error('pgbench is not installed');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-pgbench-'));
  const file = path.join(dir, 'script.sql');
  writeFileSync(file, `${script}\n`);
  try {
    const args = ['-n', '-f', file, '-c', String(clients), '-j', String(clients)];
    args.push('-t', String(transactions), url);
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (chunk) => {
        text += chunk;
      });
      child.stderr.on('data', (chunk) => {
        text += chunk;
      });
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0 ? resolve(text) : reject(new Error(`pgbench exited ${code}:\n${text}`)),
      );
    });
    const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(output);
    if (!match) throw new Error(`no tps in pgbench output:\n${output}`);
    return Number(match[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
