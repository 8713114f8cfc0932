import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { WEB_ROOT } from '../../src/http/ui.js';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCREENSHOTS = path.join(PACKAGE, 'test-results/screenshots');

/**
 * Builds the web UI when dist/web is missing or older than a file of web/ (`npm test` builds
 * it first; running this file alone after an edit must not test a stale bundle).
 */
export function ensureWebBuilt(): void {
  const index = path.join(WEB_ROOT, 'index.html');
  const builtAt = mtime(index);
  if (builtAt !== undefined && newest(path.join(PACKAGE, 'web')) <= builtAt) return;
  const vitePackage = createRequire(import.meta.url).resolve('vite/package.json');
  const vite = path.join(path.dirname(vitePackage), 'bin/vite.js');
  execFileSync(
    process.execPath,
    [vite, 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
    // vitest sets NODE_ENV=test, which would give React's development build
    {
      cwd: PACKAGE,
      stdio: 'inherit',
      timeout: 120_000,
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
}

function mtime(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : (mtime(full) ?? 0));
  }
  return latest;
}

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions of the page (CSP violations show up here). */
  problems: string[];
  /** Saves a full-page screenshot as test-results/screenshots/<name>.png. */
  screenshot(name: string, page?: Page): Promise<string>;
  close(): Promise<void>;
}

/**
 * Debian's chromium (never a downloaded browser), headless, with a fresh profile that is
 * deleted on close.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'stega-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    problems,
    async screenshot(name, target = page) {
      const file = path.join(SCREENSHOTS, `${name}.png`);
      await target.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
