import { execFileSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
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

/** An executable named `chromium` on PATH (Debian's package puts it in /usr/bin). */
function chromiumOnPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'chromium');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

interface Chromium {
  executablePath: string;
  /** Environment for the browser process (fonts when the machine has no fontconfig). */
  env: Record<string, string>;
}

/**
 * The browser the UI tests drive: Debian's chromium when it is on PATH, otherwise the
 * Chromium build that the npm package @sparticuz/chromium ships (a devDependency, so
 * `npm ci` alone brings it; never a browser downloaded at run time).
 *
 * The package unpacks its brotli archives into os.tmpdir() on first use and trusts any
 * `chromium` file already there, which two test files unpacking at once would break; so it
 * unpacks in a child process into a fresh directory that is then renamed into place
 * (atomic), keyed by the package's version, and reused by every later run on this machine.
 */
export function findChromium(): Chromium {
  const installed = chromiumOnPath();
  if (installed) return { executablePath: installed, env: {} };
  const packageDir = sparticuzDir();
  const packageJson = path.join(packageDir, 'package.json');
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  const uid = process.getuid?.() ?? 0;
  const dir = path.join(os.tmpdir(), `stega-sparticuz-chromium-${version}-${uid}`);
  const ready = path.join(dir, 'ready');
  if (!existsSync(ready)) {
    const staging = mkdtempSync(`${dir}.unpacking-`);
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const { default: c } = await import('@sparticuz/chromium'); await c.executablePath();",
      ],
      // the package unpacks into os.tmpdir(), which follows TMPDIR
      { cwd: PACKAGE, env: { ...process.env, TMPDIR: staging }, timeout: 120_000 },
    );
    // the package's fonts.conf names /tmp/fonts; this one names where they are
    writeFileSync(
      path.join(staging, 'fonts.conf'),
      `<?xml version="1.0"?>\n<fontconfig><dir>${dir}/fonts</dir><cachedir>${dir}/fonts-cache</cachedir></fontconfig>\n`,
    );
    writeFileSync(path.join(staging, 'ready'), `${version}\n`);
    try {
      renameSync(staging, dir);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // another process won the race
    }
    if (!existsSync(ready)) throw new Error(`@sparticuz/chromium did not unpack into ${dir}`);
  }
  // its own fonts (and fonts.conf) when the machine has no fontconfig set-up of its own
  const env: Record<string, string> = existsSync('/etc/fonts/fonts.conf')
    ? {}
    : { FONTCONFIG_FILE: path.join(dir, 'fonts.conf') };
  return { executablePath: path.join(dir, 'chromium'), env };
}

/** The package's directory (its exports do not include package.json). */
function sparticuzDir(): string {
  let dir = path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium'));
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) !== 'chromium') {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('@sparticuz/chromium: package directory not found');
    dir = parent;
  }
  return dir;
}

/** How a test's browser differs from the default one. */
export interface BrowserOptions {
  /**
   * false keeps cross-origin frames (a sandboxed srcdoc frame is one) in the page's process.
   * Headless Chromium sometimes never lays out an out-of-process frame: its elements keep a
   * zero box, so a pointer cannot be moved over them. The frame's sandbox holds either way.
   */
  siteIsolation?: boolean;
}

/**
 * Headless Chromium (see findChromium) with a fresh profile that is deleted on close.
 * `--no-sandbox`: the suite runs as root on CI, where Chromium's sandbox refuses to start.
 */
export async function launchBrowser({
  siteIsolation = true,
}: BrowserOptions = {}): Promise<TestBrowser> {
  const browser = findChromium();
  const profile = mkdtempSync(path.join(os.tmpdir(), 'stega-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: browser.executablePath,
    env: { ...process.env, ...browser.env } as Record<string, string>,
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
      ...(siteIsolation
        ? []
        : [
            '--disable-site-isolation-trials',
            '--disable-features=IsolateOrigins,site-per-process',
          ]),
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

/**
 * Signs `page` in to a running Stega with an API token (its admin token, by default: the
 * break-glass way, this tab only) and waits for the ticket list.
 */
export async function signIn(page: Page, stega: { url: string; token: string }): Promise<void> {
  await page.goto(`${stega.url}/tickets`);
  await page.getByText('Sign in with an API token instead').click();
  await page.getByLabel('API token').fill(stega.token);
  await page.getByRole('button', { name: 'Sign in with the token' }).click();
  await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
}

/** Signs `page` in with an email and password (the session cookie) at `path`, default /tickets. */
export async function signInWithPassword(
  page: Page,
  url: string,
  credentials: { email: string; password: string },
  path = '/tickets',
): Promise<void> {
  await page.goto(`${url}${path}`);
  const form = page.getByRole('form', { name: 'Sign in with email and password' });
  await form.getByLabel('Email', { exact: true }).fill(credentials.email);
  await form.getByLabel('Password', { exact: true }).fill(credentials.password);
  await form.getByRole('button', { name: 'Sign in', exact: true }).click();
}
