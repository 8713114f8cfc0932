import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { APP_ROLES } from '../../src/db/app-roles.js';

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
  'mail-in',
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
type Resolved = { services: Record<string, Service>; volumes?: Record<string, unknown> };

/**
 * The Compose Specification's JSON schema, as the npm package dclint ships it (its
 * schemas/compose.schema.json is the specification's compose-spec.json).
 */
function composeSchema(): object {
  const entry = createRequire(import.meta.url).resolve('dclint');
  let dir = path.dirname(entry);
  while (!existsSync(path.join(dir, 'schemas/compose.schema.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('dclint: schemas/compose.schema.json not found');
    dir = parent;
  }
  const schema = JSON.parse(readFileSync(path.join(dir, 'schemas/compose.schema.json'), 'utf8'));
  // it names draft-07 by an https URL that Ajv does not know; draft-07 is Ajv's default
  expect(schema.$schema).toMatch(/draft-07/);
  delete schema.$schema;
  return schema;
}

let compiled: ValidateFunction | undefined;
/** The schema compiled once (Ajv, every error reported). */
function composeValidator(): ValidateFunction {
  compiled ??= new Ajv({ allErrors: true, strict: false }).compile(composeSchema());
  return compiled;
}

class InterpolationError extends Error {}

/**
 * Compose's variable interpolation (Compose Specification, "Interpolation"): `$VAR`,
 * `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}`,
 * `${VAR:+replacement}`, `${VAR+replacement}` and `$$` for a literal `$`, in every string
 * value (not in keys).
 */
function interpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
      (_match, dollar, braced, operator, argument, bare) => {
        if (dollar) return '$';
        const name = (braced ?? bare) as string;
        const current = env[name];
        const set = current !== undefined;
        const nonEmpty = set && current !== '';
        switch (operator as string | undefined) {
          case undefined:
            return current ?? '';
          case ':-':
            return nonEmpty ? (current as string) : argument;
          case '-':
            return set ? (current as string) : argument;
          case ':?':
          case '?':
            if (operator === ':?' ? nonEmpty : set) return current as string;
            throw new InterpolationError(
              `required variable ${name} is missing a value: ${argument}`,
            );
          case ':+':
            return nonEmpty ? argument : '';
          default: // '+'
            return set ? argument : '';
        }
      },
    );
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, env));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolate(item, env)]),
    );
  }
  return value;
}

/**
 * deploy/compose.yaml as Compose would read it with only `env` set: YAML with merge keys,
 * interpolated, checked against the Compose Specification's JSON schema, build contexts
 * resolved against the file's directory.
 */
function loadCompose(env: Record<string, string>): Resolved {
  const raw = parseYaml(readFileSync(COMPOSE, 'utf8'), { merge: true }) as unknown;
  const model = interpolate(raw, env) as Resolved;
  const validate = composeValidator();
  if (!validate(model)) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
    throw new Error(`not a valid Compose file: ${errors.join('; ')}`);
  }
  for (const service of Object.values(model.services)) {
    if (service.build) {
      service.build.context = path.resolve(path.dirname(COMPOSE), service.build.context);
    }
  }
  return model;
}

/** docker-compose (Debian's, v1) or `docker compose` (v2), where this machine has one. */
function composeBinary(): string[] | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(path.join(dir, 'docker-compose'), constants.X_OK);
      return ['docker-compose'];
    } catch {}
  }
  const plugin = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  return plugin.status === 0 ? ['docker', 'compose'] : undefined;
}

/**
 * deploy/compose.yaml checked against the Compose Specification (JSON schema from an npm
 * package, so a machine with Node only runs it), its structure, and the Dockerfile's
 * structure. Where docker-compose is installed (.ci/run installs it) its `config` must agree.
 * No container engine runs here.
 */
describe('deploy/compose.yaml and deploy/Dockerfile', () => {
  const SECRETS = {
    POSTGRES_PASSWORD: 'pg-secret-for-test',
    STEGA_WEB_DB_PASSWORD: 'web-role-secret-for-test',
    STEGA_MAIL_DB_PASSWORD: 'mail-role-secret-for-test',
    STEGA_WORKER_DB_PASSWORD: 'worker-role-secret-for-test',
    STEGA_TICKER_DB_PASSWORD: 'ticker-role-secret-for-test',
    STEGA_ADMIN_TOKEN: 'admin-secret-for-test-0123456789abcdef',
    STEGA_TOTP_KEY: 'totp-key-secret-for-test-0123456789abcdef',
  };
  /** The database role each Stega service logs in as (db/app-roles.ts); only migrate owns. */
  const DATABASE_ROLES: Record<string, string> = {
    migrate: 'stega',
    web: APP_ROLES.web,
    jobs: APP_ROLES.web,
    ticker: APP_ROLES.ticker,
    'notification-worker': APP_ROLES.worker,
    'sla-breach-worker': APP_ROLES.worker,
    'mail-in': APP_ROLES.mail,
  };
  /** Each role's own password (deploy/.env), by the role's name. */
  const ROLE_PASSWORDS: Record<string, string> = {
    [APP_ROLES.web]: SECRETS.STEGA_WEB_DB_PASSWORD,
    [APP_ROLES.mail]: SECRETS.STEGA_MAIL_DB_PASSWORD,
    [APP_ROLES.worker]: SECRETS.STEGA_WORKER_DB_PASSWORD,
    [APP_ROLES.ticker]: SECRETS.STEGA_TICKER_DB_PASSWORD,
  };
  const ROLE_PASSWORD_VARIABLES = [
    'STEGA_WEB_DB_PASSWORD',
    'STEGA_MAIL_DB_PASSWORD',
    'STEGA_WORKER_DB_PASSWORD',
    'STEGA_TICKER_DB_PASSWORD',
  ] as const;
  let cached: Resolved | undefined;
  const resolved = (): Resolved => {
    cached ??= loadCompose(SECRETS);
    return cached;
  };
  const binary = composeBinary();

  it('is valid against the Compose Specification schema, which refuses a broken file', () => {
    expect(() => resolved()).not.toThrow();
    // the schema is real: a misspelt key and a wrongly typed value are refused
    const validate = composeValidator();
    const good = structuredClone(resolved());
    expect(validate(good)).toBe(true);
    const misspelt = structuredClone(good) as unknown as {
      services: Record<string, Record<string, unknown>>;
    };
    (misspelt.services.web as Record<string, unknown>).dependson = {};
    expect(validate(misspelt)).toBe(false);
    const wrongType = structuredClone(good) as unknown as {
      services: Record<string, Record<string, unknown>>;
    };
    (wrongType.services.web as Record<string, unknown>).ports = 'not-a-list';
    expect(validate(wrongType)).toBe(false);
    // an extra check where the machine has docker-compose: its reading agrees with ours
    if (binary) agreesWithDockerCompose(binary);
  });

  /** `docker-compose config` with only `env` (a deploy/.env on this machine is ignored). */
  function dockerComposeConfig(binary: string[], env: Record<string, string>) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-compose-'));
    try {
      const emptyEnvFile = path.join(dir, 'empty.env');
      writeFileSync(emptyEnvFile, '');
      return spawnSync(
        binary[0] as string,
        [...binary.slice(1), '--env-file', emptyEnvFile, '-f', COMPOSE, 'config'],
        { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 60_000 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  function agreesWithDockerCompose(binary: string[]) {
    const result = dockerComposeConfig(binary, SECRETS);
    expect(result.status, result.stderr).toBe(0);
    const theirs = parseYaml(result.stdout) as Resolved;
    const ours = resolved();
    expect(Object.keys(theirs.services).sort()).toEqual(Object.keys(ours.services).sort());
    for (const [name, service] of Object.entries(ours.services)) {
      expect(theirs.services[name]?.environment, name).toEqual(service.environment);
      expect(theirs.services[name]?.command, name).toEqual(service.command);
    }
    const missing = dockerComposeConfig(binary, {});
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('set POSTGRES_PASSWORD');
  }

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
    for (const missing of Object.keys(SECRETS) as (keyof typeof SECRETS)[]) {
      const { [missing]: _gone, ...others } = SECRETS;
      expect(() => loadCompose(others), missing).toThrow(new RegExp(`${missing}.*set ${missing}`));
    }
    const config = resolved();
    expect(config.services.web?.environment?.STEGA_ADMIN_TOKEN).toBe(SECRETS.STEGA_ADMIN_TOKEN);
    for (const [name, service] of Object.entries(config.services)) {
      const text = JSON.stringify(service.environment ?? {});
      // the owner's password reaches postgres and migrate only
      if (name === 'postgres' || name === 'migrate') {
        expect(text, name).toContain(SECRETS.POSTGRES_PASSWORD);
      } else {
        expect(text, name).not.toContain(SECRETS.POSTGRES_PASSWORD);
      }
      if (name !== 'web') expect(text, name).not.toContain(SECRETS.STEGA_ADMIN_TOKEN);
      if (name !== 'web') expect(text, name).not.toContain(SECRETS.STEGA_TOTP_KEY);
    }
  });

  it('connects no app service as the superuser: only migrate, which creates their roles', () => {
    const config = resolved();
    const superuser = config.services.postgres?.environment?.POSTGRES_USER;
    expect(superuser).toBe('stega'); // the official image makes POSTGRES_USER a superuser
    for (const name of STEGA_SERVICES) {
      const environment = config.services[name]?.environment ?? {};
      const user = new URL(environment.DATABASE_URL ?? '').username;
      expect(user, name).toBe(DATABASE_ROLES[name]);
      if (name === 'migrate') {
        for (const variable of ROLE_PASSWORD_VARIABLES) {
          expect(environment[variable], variable).toBe(SECRETS[variable]);
        }
      } else {
        expect(user, name).not.toBe(superuser);
        expect(Object.values(APP_ROLES), name).toContain(user);
        // a service knows its own role's password only, in its URL
        for (const variable of ROLE_PASSWORD_VARIABLES) {
          expect(environment[variable], name).toBeUndefined();
        }
        const text = JSON.stringify(environment);
        for (const [role, password] of Object.entries(ROLE_PASSWORDS)) {
          if (role !== user)
            expect(text, `${name} knows ${role}'s password`).not.toContain(password);
        }
      }
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
      const password =
        name === 'migrate'
          ? SECRETS.POSTGRES_PASSWORD
          : (ROLE_PASSWORDS[DATABASE_ROLES[name] as string] as string);
      expect(parsed.databaseUrl, name).toBe(
        `postgres://${DATABASE_ROLES[name]}:${password}@postgres:5432/stega`,
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
