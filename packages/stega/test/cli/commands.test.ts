import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.ts');
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const run = promisify(execFile);

async function stega(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      env: { ...process.env, ...env, DATABASE_URL: env.DATABASE_URL ?? '' },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

const COMMANDS = [
  'start',
  'migrate',
  'web',
  'jobs',
  'ticker',
  'notification-worker',
  'sla-breach-worker',
  'demo',
];

describe('the stega command line', () => {
  it('prints its version with --version and -V', async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO, 'packages/stega/package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      expect(await stega([flag]), flag).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    }
  });

  it('lists every command in --help', async () => {
    const { code, stdout } = await stega(['--help']);
    expect(code).toBe(0);
    for (const command of COMMANDS) expect(stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    expect(stdout).toMatch(/DATABASE_URL/);
  });

  it.each(COMMANDS)('%s --help describes the command', async (command) => {
    const { code, stdout } = await stega([command, '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`Usage: stega ${command}`));
  });

  it('refuses an unknown command', async () => {
    const { code, stderr } = await stega(['frobnicate']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('stops with a clear message on bad configuration', async () => {
    const { code, stderr } = await stega(['migrate'], { PORT: 'eighty' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/invalid configuration:\n\s+- PORT must be an integer/);
  });

  it('refuses a short admin token, and the .env.example placeholder, saying how to make one', async () => {
    const short = await stega(['start'], { STEGA_ADMIN_TOKEN: 'only-12-char' });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(
      /STEGA_ADMIN_TOKEN must be at least 32 characters \(it has 12\); make one with `openssl rand -hex 32`/,
    );
    const example = await readFile(path.resolve(REPO, 'deploy/.env.example'), 'utf8');
    const placeholder = /^STEGA_ADMIN_TOKEN=(.*)$/m.exec(example)?.[1];
    expect(placeholder).toBeTruthy();
    const copied = await stega(['start'], { STEGA_ADMIN_TOKEN: placeholder ?? '' });
    expect(copied.code).toBe(2);
    expect(copied.stderr).toMatch(
      /STEGA_ADMIN_TOKEN is still the deploy\/\.env\.example placeholder; make one with `openssl rand -hex 32`/,
    );
  });

  it('says which commands need DATABASE_URL', async () => {
    const { code, stderr } = await stega(['sla-breach-worker']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/stega sla-breach-worker needs DATABASE_URL/);
  });
});
