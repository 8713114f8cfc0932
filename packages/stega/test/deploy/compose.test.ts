import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const COMPOSE = path.join(ROOT, 'deploy/compose.yaml');
const DOCKERFILE = path.join(ROOT, 'deploy/Dockerfile');
const STEGA_SERVICES = [
  'migrate',
  'web',
  'jobs',
  'ticker',
  'notification-worker',
  'sla-breach-worker',
];
/** Services meant to run as several replicas: no container_name, no host port. */
const SCALED = ['sla-breach-worker', 'ticker', 'jobs'];

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  restart?: string;
  container_name?: string;
  ports?: unknown[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string; disable?: boolean };
  volumes?: string[];
}

/**
 * deploy/compose.yaml through Debian's docker-compose (`config` validates the file against
 * the Compose schema and interpolates it), and the Dockerfile's structure. No container
 * engine runs here; .ci/run installs docker-compose.
 */
describe('deploy/compose.yaml and deploy/Dockerfile', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-compose-'));
  const emptyEnvFile = path.join(dir, 'empty.env');
  writeFileSync(emptyEnvFile, '');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** `docker-compose config` with only `env` (a deploy/.env on this machine is ignored). */
  const composeConfig = (env: Record<string, string>, extra: string[] = []) => {
    const result = spawnSync(
      'docker-compose',
      ['--env-file', emptyEnvFile, '-f', COMPOSE, 'config', ...extra],
      {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    if (result.error) {
      throw new Error(
        `docker-compose could not run (${result.error.message}); install Debian's docker-compose (.ci/run does)`,
      );
    }
    return result;
  };
  const SECRETS = {
    POSTGRES_PASSWORD: 'pg-secret-for-test',
    STEGA_ADMIN_TOKEN: 'admin-secret-for-test',
  };
  type Resolved = { services: Record<string, Service>; volumes?: Record<string, unknown> };
  let cached: Resolved | undefined;
  const resolved = (): Resolved => {
    if (cached) return cached;
    const result = composeConfig(SECRETS);
    expect(result.status, result.stderr).toBe(0);
    // docker-compose prints YAML; PyYAML comes with Debian's docker-compose
    const json = spawnSync(
      'python3',
      ['-c', 'import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
      { input: result.stdout, encoding: 'utf8' },
    );
    expect(json.status, json.stderr).toBe(0);
    cached = JSON.parse(json.stdout) as Resolved;
    return cached;
  };

  it('is a valid Compose file with postgres and every Stega role', () => {
    const config = resolved();
    expect(Object.keys(config.services).sort()).toEqual(['postgres', ...STEGA_SERVICES].sort());
    for (const name of STEGA_SERVICES) {
      const service = config.services[name] as Service;
      expect(service.command, name).toEqual([name]);
      expect(service.build?.dockerfile, name).toBe('deploy/Dockerfile');
      expect(service.build?.context, name).toBe(ROOT);
    }
  });

  it('refuses to start without the secrets instead of defaulting them', () => {
    const withoutPassword = composeConfig({ STEGA_ADMIN_TOKEN: 'x'.repeat(12) });
    expect(withoutPassword.status).not.toBe(0);
    expect(withoutPassword.stderr).toContain('set POSTGRES_PASSWORD');
    const withoutToken = composeConfig({ POSTGRES_PASSWORD: 'x' });
    expect(withoutToken.status).not.toBe(0);
    expect(withoutToken.stderr).toContain('set STEGA_ADMIN_TOKEN');
    const config = resolved();
    expect(config.services.web?.environment?.STEGA_ADMIN_TOKEN).toBe(SECRETS.STEGA_ADMIN_TOKEN);
    for (const [name, service] of Object.entries(config.services)) {
      const text = JSON.stringify(service.environment ?? {});
      if (name !== 'postgres') expect(text, name).toContain(SECRETS.POSTGRES_PASSWORD); // in DATABASE_URL
      if (name !== 'web') expect(text, name).not.toContain(SECRETS.STEGA_ADMIN_TOKEN);
    }
  });

  it('runs postgres from the official image on a named volume, with a health check', () => {
    const config = resolved();
    const postgres = config.services.postgres as Service;
    expect(postgres.image).toMatch(/^postgres:\d+/);
    const volume = postgres.volumes?.[0]?.split(':')[0] ?? '';
    expect(Object.keys(config.volumes ?? {})).toContain(volume);
    expect(JSON.stringify(postgres.healthcheck?.test)).toContain('pg_isready');
  });

  it('starts every role after a successful one-shot migrate', () => {
    const config = resolved();
    expect(config.services.migrate?.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
    });
    expect(config.services.migrate?.restart).toBe('no');
    for (const name of STEGA_SERVICES.filter((s) => s !== 'migrate')) {
      expect(config.services[name]?.depends_on, name).toEqual({
        migrate: { condition: 'service_completed_successfully' },
      });
    }
  });

  it('gives every long-running service a health check and a restart policy', () => {
    const config = resolved();
    for (const [name, service] of Object.entries(config.services)) {
      if (name === 'migrate') continue; // one-shot: its exit status is its health
      const test = service.healthcheck?.test ?? [];
      expect(Array.isArray(test) ? test[0] : test, name).not.toBe('NONE');
      expect(test.length, name).toBeGreaterThan(0);
      expect(['on-failure', 'unless-stopped', 'always'], name).toContain(service.restart);
    }
    const workerCheck = config.services['sla-breach-worker']?.healthcheck?.test;
    expect(workerCheck).toEqual(['CMD', 'node', 'packages/stega/bin/stega.js', 'healthcheck']);
    expect(JSON.stringify(config.services.web?.healthcheck?.test)).toContain('/healthz');
  });

  it('can scale the workers: no container names, no fixed host ports on scaled services', () => {
    const config = resolved();
    for (const [name, service] of Object.entries(config.services)) {
      expect(service.container_name, name).toBeUndefined();
      if (SCALED.includes(name)) expect(service.ports, name).toBeUndefined();
    }
  });

  it("passes each Stega service an environment that Stega's own validation accepts", () => {
    const config = resolved();
    for (const name of STEGA_SERVICES) {
      const environment = config.services[name]?.environment ?? {};
      const parsed = loadConfig(environment, '/app');
      expect(parsed.databaseUrl, name).toBe(
        `postgres://stega:${SECRETS.POSTGRES_PASSWORD}@postgres:5432/stega`,
      );
      expect(parsed.subconsumerName, name).not.toBe(''); // hostname-pid per container
    }
    expect(loadConfig(config.services.web?.environment ?? {}, '/app').port).toBe(3000);
  });

  it('builds a small multi-stage image that runs as a non-root user', () => {
    const text = readFileSync(DOCKERFILE, 'utf8');
    const lines = text
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    const stages: { name: string; lines: string[] }[] = [];
    for (const line of lines) {
      const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?$/i.exec(line);
      if (from) stages.push({ name: from[1] ?? '', lines: [] });
      else stages.at(-1)?.lines.push(line);
    }
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const build = stages[0] as { name: string; lines: string[] };
    const final = stages.at(-1) as { name: string; lines: string[] };
    expect(build.lines.some((l) => /^RUN .*npm run build/.test(l))).toBe(true);

    const npmCi = final.lines.filter((l) => /^RUN .*npm ci\b/.test(l));
    expect(npmCi).toHaveLength(1);
    expect(npmCi[0]).toContain('--omit=dev');
    expect(npmCi[0]).toContain('--ignore-scripts'); // `prepare` would try to build
    expect(final.lines.some((l) => /^RUN .*npm run build/.test(l))).toBe(false);
    const fromBuild = final.lines.filter((l) => l.startsWith(`COPY --from=${build.name} `));
    for (const dist of ['packages/pgque/dist', 'packages/stega/dist']) {
      expect(
        fromBuild.some((l) => l.includes(dist)),
        dist,
      ).toBe(true);
    }

    const users = final.lines.filter((l) => /^USER\s/.test(l));
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER\s+(root|0)(:|\s|$)/);
    for (const line of lines.filter((l) => /^(ENV|ARG)\s/.test(l))) {
      expect(line).not.toMatch(/PASSWORD|TOKEN|SECRET|DATABASE_URL/);
    }
    expect(final.lines.some((l) => /^HEALTHCHECK\s/.test(l))).toBe(true);
    expect(final.lines).toContain('ENTRYPOINT ["node", "packages/stega/bin/stega.js"]');

    // every file the stages copy from the build context exists
    for (const line of lines.filter((l) => /^COPY\s/.test(l) && !l.includes('--from='))) {
      const sources = line.split(/\s+/).slice(1, -1);
      for (const source of sources) expect(existsSync(path.join(ROOT, source)), source).toBe(true);
    }
    expect(existsSync(path.join(ROOT, 'packages/stega/bin/stega.js'))).toBe(true);
    expect(existsSync(path.join(ROOT, 'packages/pgque/bin/pgque.js'))).toBe(true);
  });
});
