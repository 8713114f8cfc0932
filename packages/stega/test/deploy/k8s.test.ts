import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import pg from 'pg';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { inTransaction } from '../../src/db/pool.js';
import { nodeFlagsFor } from '../../src/processes/node-flags.js';
import { type Manifest, podContainers, renderKustomization } from './kustomize.js';
import { alertPolicyInsert, ticketsDueInsert } from './workload.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const BASE = path.join(ROOT, 'deploy/k8s');
const ROLES = ['web', 'jobs', 'ticker', 'notification-worker', 'sla-breach-worker', 'mail-in'];
const HEALTHCHECK = ['node', '/app/packages/stega/bin/stega.js', 'healthcheck'];

/** The model class (and its types' module, for the unknown-field check) of every kind used. */
const MODELS: Record<
  string,
  { model: new (data: never) => { validate(): void }; types: string; type: string }
> = {
  'v1/ConfigMap': { model: ConfigMap, types: 'kubernetes-models/v1/ConfigMap', type: 'IConfigMap' },
  'v1/Service': { model: Service, types: 'kubernetes-models/v1/Service', type: 'IService' },
  'apps/v1/Deployment': {
    model: Deployment,
    types: 'kubernetes-models/apps/v1/Deployment',
    type: 'IDeployment',
  },
  'batch/v1/Job': { model: Job, types: 'kubernetes-models/batch/v1/Job', type: 'IJob' },
  'policy/v1/PodDisruptionBudget': {
    model: PodDisruptionBudget,
    types: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    type: 'IPodDisruptionBudget',
  },
  'keda.sh/v1alpha1/ScaledObject': {
    model: ScaledObject,
    types: '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject',
    type: 'IScaledObject',
  },
  'keda.sh/v1alpha1/TriggerAuthentication': {
    model: TriggerAuthentication,
    types: '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication',
    type: 'ITriggerAuthentication',
  },
};

type Any = any;

/**
 * deploy/k8s: the kustomize base rendered (kustomize.ts), every object validated against
 * the Kubernetes OpenAPI schemas and the KEDA CRD schemas (kubernetes-models and
 * @kubernetes-models/keda ship them as validators, and their types: TypeScript's excess
 * property check rejects a field the schema does not know), the roles held to what
 * deploy/compose.yaml does, and the KEDA trigger's query run against a real database.
 */
describe('deploy/k8s (kustomize base)', () => {
  const objects = renderKustomization(BASE);
  const find = (kind: string, name: string): Any =>
    objects.find((o) => o.kind === kind && o.metadata.name === name);
  const deployment = (role: string): Any => find('Deployment', `stega-${role}`);
  const migrateJob: Any = find('Job', 'stega-migrate');
  const compose = parseYaml(readFileSync(path.join(ROOT, 'deploy/compose.yaml'), 'utf8'), {
    merge: true,
  }) as { services: Record<string, Any> };

  it('renders one object per kind and name, all in the namespace and labelled', () => {
    expect(objects.length).toBeGreaterThan(0);
    const keys = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const object of objects) {
      expect(object.metadata.namespace, keys.join()).toBe('stega');
      expect(object.metadata.labels?.['app.kubernetes.io/part-of']).toBe('stega');
    }
    for (const object of objects.filter((o) => o.spec?.template)) {
      expect(object.spec.template.metadata.labels['app.kubernetes.io/part-of']).toBe('stega');
      for (const container of podContainers(object)) expect(container.image).toBe('stega:local');
    }
  });

  it('validates against the Kubernetes and KEDA schemas', () => {
    for (const object of objects) {
      const entry = MODELS[`${object.apiVersion}/${object.kind}`];
      expect(entry, `${object.apiVersion} ${object.kind} has a schema here`).toBeDefined();
      expect(() => new (entry as Any).model(object).validate(), object.metadata.name).not.toThrow();
    }
    // the validators catch a wrong type, so a broken manifest would fail here
    const broken = structuredClone(deployment('ticker'));
    broken.spec.replicas = 'two';
    expect(() => new Deployment(broken).validate()).toThrow(/replicas/);
  });

  it('has no field the schemas do not know (TypeScript excess property check)', () => {
    const diagnostics = unknownFieldDiagnostics(objects);
    expect(diagnostics).toEqual([]);
    // and the check itself catches a misspelt field
    const typo = structuredClone(deployment('ticker'));
    typo.spec.template.spec.containers[0].livenesProbe = {};
    expect(unknownFieldDiagnostics([typo]).join()).toMatch(/livenesProbe/);
  }, 60_000);

  it('runs every role: a migrate Job and one Deployment per long-running role', () => {
    expect(migrateJob.spec.template.spec.containers[0].args).toEqual(['migrate']);
    expect(migrateJob.spec.template.spec.restartPolicy).toBe('Never');
    for (const role of ROLES) {
      const d = deployment(role);
      expect(d, role).toBeDefined();
      expect(d.spec.template.spec.containers[0].args).toEqual([role]);
      // every Stega service of compose has its counterpart
      expect(compose.services[role]?.command).toEqual([role]);
      expect(d.spec.selector.matchLabels).toEqual(
        pick(d.spec.template.metadata.labels, Object.keys(d.spec.selector.matchLabels)),
      );
    }
    expect(compose.services.migrate?.command).toEqual(['migrate']);
    const service = find('Service', 'stega-web');
    expect(
      pick(deployment('web').spec.template.metadata.labels, Object.keys(service.spec.selector)),
    ).toEqual(service.spec.selector);
    const port = deployment('web').spec.template.spec.containers[0].ports[0];
    expect(service.spec.ports[0].targetPort).toBe(port.name);
    expect(port.containerPort).toBe(Number(compose.services.web.environment.PORT));
    // mail-in's SMTP listener behind its Service, on the port compose gives it
    const smtp = find('Service', 'stega-mail-in');
    const listener = deployment('mail-in').spec.template.spec.containers[0];
    expect(
      pick(deployment('mail-in').spec.template.metadata.labels, Object.keys(smtp.spec.selector)),
    ).toEqual(smtp.spec.selector);
    expect(smtp.spec.ports[0]).toMatchObject({ port: 25, targetPort: 'smtp' });
    expect(listener.ports[0]).toEqual({
      name: 'smtp',
      containerPort: Number(compose.services['mail-in'].environment.INBOUND_SMTP_PORT),
    });
    expect(listener.env.find((e: Any) => e.name === 'INBOUND_SMTP_PORT')?.value).toBe(
      compose.services['mail-in'].environment.INBOUND_SMTP_PORT,
    );
    // mail-in starts with its Node flags, as `stega cluster` starts it
    const flags = nodeFlagsFor('mail-in').join(' ');
    expect(flags).not.toBe('');
    expect(listener.env.find((e: Any) => e.name === 'NODE_OPTIONS')?.value).toBe(flags);
    expect(compose.services['mail-in'].environment.NODE_OPTIONS).toBe(flags);
  });

  it('checks health as compose does, and stops within the same grace period', () => {
    const seconds = (value: string) => Number(value.replace(/s$/, ''));
    const check = compose.services['sla-breach-worker'].healthcheck;
    const grace = seconds(compose.services['sla-breach-worker'].stop_grace_period);
    for (const role of ROLES) {
      const pod = deployment(role).spec.template.spec;
      const container = pod.containers[0];
      expect(pod.terminationGracePeriodSeconds, role).toBe(grace);
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const p = container[probe];
        if (role === 'web')
          expect(p.httpGet, `${role} ${probe}`).toEqual({ path: '/healthz', port: 'http' });
        else expect(p.exec?.command, `${role} ${probe}`).toEqual(HEALTHCHECK);
        expect(p.timeoutSeconds, `${role} ${probe}`).toBe(seconds(check.timeout));
      }
      // compose: every 15 s, unhealthy after 3 failures, failures ignored for the first 30 s
      expect(container.livenessProbe.periodSeconds).toBe(seconds(check.interval));
      expect(container.livenessProbe.failureThreshold).toBe(check.retries);
      const startup = container.startupProbe;
      expect(startup.periodSeconds * startup.failureThreshold).toBeGreaterThanOrEqual(
        seconds(check.start_period),
      );
    }
    expect(JSON.stringify(compose.services.web.healthcheck.test)).toContain('/healthz');
    expect(check.test).toEqual(['CMD', 'node', 'packages/stega/bin/stega.js', 'healthcheck']);
    // the one-shot has no probes: its exit status is its health
    const job = migrateJob.spec.template.spec.containers[0];
    expect([job.livenessProbe, job.readinessProbe, job.startupProbe]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('sets only variables the configuration knows, with values it accepts', () => {
    const data = find('ConfigMap', 'stega-config').data as Record<string, string>;
    const reference = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    for (const key of Object.keys(data)) expect(reference, key).toContain(`| \`${key}\``);
    const config = loadConfig({ ...data, DATABASE_URL: 'postgres://app@db:5432/stega' }, '/app');
    expect(config.slaDeadIntervalSeconds).toBe(Number(data.SLA_DEAD_INTERVAL_SECONDS));
    expect(config.coopPageSize).toBe(Number(data.COOP_PAGE_SIZE));
  });

  it('takes secrets from Secrets only: the owner URL for migrate, each role its own database role, the token for web', () => {
    const env = (object: Any) => object.spec.template.spec.containers[0].env as Any[];
    const secretOf = (object: Any, name: string) =>
      env(object).find((e) => e.name === name)?.valueFrom?.secretKeyRef;
    expect(secretOf(migrateJob, 'DATABASE_URL')).toEqual({ name: 'stega-db-owner', key: 'url' });
    // each role's own password, in the secret beside the URL its processes use
    for (const role of ['web', 'mail', 'worker', 'ticker']) {
      expect(secretOf(migrateJob, `STEGA_${role.toUpperCase()}_DB_PASSWORD`), role).toEqual({
        name: `stega-db-${role}`,
        key: 'password',
      });
    }
    expect(secretOf(migrateJob, 'STEGA_APP_DB_PASSWORD')).toBeUndefined();
    // the same split as compose: stega_web, stega_mail, stega_worker, stega_ticker (docs/operations.md, "Database roles")
    const databaseRole: Record<string, string> = {
      web: 'stega-db-web',
      jobs: 'stega-db-web',
      ticker: 'stega-db-ticker',
      'notification-worker': 'stega-db-worker',
      'sla-breach-worker': 'stega-db-worker',
      'mail-in': 'stega-db-mail',
    };
    for (const role of ROLES) {
      const d = deployment(role);
      expect(secretOf(d, 'DATABASE_URL'), role).toEqual({ name: databaseRole[role], key: 'url' });
      expect(secretOf(d, 'STEGA_ADMIN_TOKEN'), role).toEqual(
        role === 'web' ? { name: 'stega-admin', key: 'token' } : undefined,
      );
      expect(secretOf(d, 'STEGA_TOTP_KEY'), role).toEqual(
        role === 'web' ? { name: 'stega-admin', key: 'totp-key' } : undefined,
      );
    }
    // no secret value is written into a manifest: no plain value for a secret variable,
    // no Secret object in the base
    for (const object of objects) {
      for (const e of object.spec?.template ? env(object) : []) {
        if (
          [
            'DATABASE_URL',
            'STEGA_ADMIN_TOKEN',
            'STEGA_TOTP_KEY',
            'STEGA_APP_DB_PASSWORD',
            'STEGA_WEB_DB_PASSWORD',
            'STEGA_MAIL_DB_PASSWORD',
            'STEGA_WORKER_DB_PASSWORD',
            'STEGA_TICKER_DB_PASSWORD',
            'SMTP_URL',
            'REPORT_WEBHOOK_SECRET',
          ].includes(e.name)
        ) {
          expect(e.value, `${object.metadata.name} ${e.name}`).toBeUndefined();
        }
      }
    }
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const config = find('ConfigMap', 'stega-config');
    for (const key of Object.keys(config.data)) {
      expect([
        'DATABASE_URL',
        'STEGA_ADMIN_TOKEN',
        'STEGA_APP_DB_PASSWORD',
        'STEGA_WEB_DB_PASSWORD',
        'SMTP_URL',
        'REPORT_WEBHOOK_SECRET',
      ]).not.toContain(key);
    }
    // every Secret the base reads is one the operations guide tells how to create
    const operations = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const referenced = new Set<string>();
    JSON.stringify(objects, (key, value) => {
      if ((key === 'secretKeyRef' || key === 'secretRef') && value?.name)
        referenced.add(value.name);
      return value;
    });
    for (const target of find('TriggerAuthentication', 'stega-db-metrics').spec.secretTargetRef) {
      referenced.add(target.name);
    }
    expect([...referenced].sort()).toEqual(
      [
        'stega-admin',
        'stega-db-mail',
        'stega-db-metrics',
        'stega-db-owner',
        'stega-db-ticker',
        'stega-db-web',
        'stega-db-worker',
        'stega-delivery',
      ].sort(),
    );
    for (const name of referenced) expect(operations, name).toContain(`secret generic ${name}`);
  });

  it('runs as non-root on a read-only root file system, like the image', () => {
    for (const object of [migrateJob, ...ROLES.map(deployment)]) {
      const pod = object.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot, object.metadata.name).toBe(true);
      expect(pod.automountServiceAccountToken).toBe(false);
      const security = pod.containers[0].securityContext;
      expect(security).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
      const mounts = pod.containers[0].volumeMounts.map((m: Any) => m.mountPath);
      expect(mounts).toContain('/tmp'); // STEGA_HEALTH_FILE lives there
    }
  });

  it('scales: ticker and jobs stand by in pairs, one notification-worker, KEDA for the workers, disruption budgets', () => {
    for (const role of ['ticker', 'jobs', 'web', 'mail-in']) {
      expect(deployment(role).spec.replicas, role).toBeGreaterThanOrEqual(2);
    }
    expect(deployment('notification-worker').spec.replicas).toBe(1);
    expect(deployment('notification-worker').spec.strategy).toEqual({ type: 'Recreate' });
    // KEDA owns the workers' replica count: a replicas field would fight it on every apply
    expect(deployment('sla-breach-worker').spec.replicas).toBeUndefined();
    const scaled = find('ScaledObject', 'stega-sla-breach-worker');
    expect(scaled.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'stega-sla-breach-worker',
    });
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
    expect(scaled.spec.maxReplicaCount).toBeGreaterThan(scaled.spec.minReplicaCount);
    const [trigger] = scaled.spec.triggers;
    expect(trigger.type).toBe('postgresql');
    expect(Number(trigger.metadata.targetQueryValue)).toBeGreaterThan(0);
    expect(trigger.authenticationRef.name).toBe('stega-db-metrics');
    expect(find('TriggerAuthentication', 'stega-db-metrics').spec.secretTargetRef).toEqual([
      { parameter: 'connection', name: 'stega-db-metrics', key: 'url' },
    ]);
    // every replicated role has a budget whose selector picks exactly its pods
    const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget') as Any[];
    for (const role of ['sla-breach-worker', 'ticker', 'jobs', 'web', 'mail-in']) {
      const labels = deployment(role).spec.template.metadata.labels;
      const mine = budgets.filter((b) =>
        Object.entries(b.spec.selector.matchLabels).every(([k, v]) => labels[k] === v),
      );
      expect(mine.length, role).toBe(1);
      expect(mine[0].spec.maxUnavailable).toBe(1);
    }
  });

  describe("the KEDA trigger's query on a real database", async () => {
    const db = await createTestDatabase({ template: 'stega' });
    const query = find('ScaledObject', 'stega-sla-breach-worker').spec.triggers[0].metadata
      .query as string;
    // the role KEDA connects as: usage on the schema and the one function, nothing else
    const role = `stega_metrics_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    await db.pool.query(`create role ${role} login password '${password}'`);
    await db.pool.query(`grant usage on schema pgque to ${role}`);
    await db.pool.query(`grant execute on function pgque.get_consumer_info(text) to ${role}`);
    const url = new URL(db.url);
    url.username = role;
    url.password = password;
    const metrics = new pg.Client({ connectionString: url.toString() });
    await metrics.connect();
    afterAll(async () => {
      await metrics.end();
      await db.pool.query(`drop owned by ${role}`);
      await db.pool.query(`drop role ${role}`);
    });
    const backlog = async () => {
      const { rows } = await metrics.query(query);
      expect(rows).toHaveLength(1);
      return Number(Object.values(rows[0] as object)[0]);
    };
    // a tick as the ticker makes it (force_next_tick would move the event sequence on
    // by about 2,000 ids and make the estimate meaningless): once events wait longer than
    // the queue's ticker_max_lag (100 ms)
    const tick = async () => {
      const last = async () =>
        (
          await db.pool.query('select last_tick_id from pgque.get_queue_info($1)', [
            NOTIFICATIONS_QUEUE,
          ])
        ).rows[0]?.last_tick_id;
      const before = await last();
      await eventually(
        async () => {
          await db.pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
          return (await last()) !== before;
        },
        'a tick',
        { timeoutMs: 15_000, intervalMs: 50 },
      );
    };
    const receive = async (member: string) => {
      const { rows } = await db.pool.query(
        `select batch_id from pgque.receive_coop($1, $2, $3, 1000, '1 minute')`,
        [NOTIFICATIONS_QUEUE, SLA_GROUP, member],
      );
      return { batch: rows[0]?.batch_id as string | undefined, events: rows.length };
    };
    const breaches = async (n: number) => {
      const policy = await alertPolicyInsert(db.pool, { in_app: true });
      await inTransaction(db.pool, async (tx) => {
        await ticketsDueInsert(tx, policy, n, new Date(Date.now() - 60_000));
        expect(await breachRecordDue(tx, new Date(), 1000)).toHaveLength(n);
      });
    };

    it('is 0 with nothing waiting, and counts the breaches published and not yet acknowledged', async () => {
      expect(await backlog()).toBe(0);
      await breaches(30);
      expect(await backlog()).toBe(0); // not ticked yet: invisible to consumers too
      await tick();
      // an estimate from event ids: exact here but for the very first id a fresh queue's
      // sequence hands out (its last_value reads 1 before and after it)
      expect(await backlog()).toBeGreaterThanOrEqual(29);
      expect(await backlog()).toBeLessThanOrEqual(30);
      const base = await backlog();
      // a member takes them: still the backlog until it acknowledges
      await db.pool.query('select pgque.register_subconsumer($1, $2, $3, true)', [
        NOTIFICATIONS_QUEUE,
        SLA_GROUP,
        'keda-test-1',
      ]);
      await breaches(12);
      await tick();
      const first = await receive('keda-test-1');
      expect(first.events).toBeGreaterThan(0);
      expect(await backlog()).toBe(base + 12);
      await db.pool.query('select pgque.ack($1)', [first.batch]);
      // whatever the first batch held is gone from the backlog; drain the rest
      for (;;) {
        const next = await receive('keda-test-1');
        if (!next.batch) break;
        if (next.events > 0) expect(await backlog()).toBeGreaterThan(0);
        await db.pool.query('select pgque.ack($1)', [next.batch]);
      }
      expect(await backlog()).toBe(0);
    });

    it('reads nothing it is not granted', async () => {
      await expect(metrics.query('select count(*) from stega.tickets')).rejects.toThrow(
        /permission denied/,
      );
    });
  });
});

/** `pick(o, keys)`: the entries of `o` under `keys`. */
function pick(object: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.map((key) => [key, object[key] as string]));
}

/**
 * Type-checks every object as an object literal of its kind's interface: TypeScript reports
 * any property the interface (generated from the schema) does not declare, however deep.
 */
function unknownFieldDiagnostics(objects: Manifest[]): string[] {
  const imports = new Map<string, string>();
  const lines = objects.map((object, i) => {
    const entry = MODELS[`${object.apiVersion}/${object.kind}`];
    if (!entry) throw new Error(`no types for ${object.apiVersion} ${object.kind}`);
    imports.set(entry.types, entry.type);
    return `export const o${i}: ${entry.type} = ${JSON.stringify(object)};`;
  });
  const source = [
    ...[...imports].map(([from, type]) => `import type { ${type} } from '${from}';`),
    ...lines,
  ].join('\n');
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '__k8s_manifests__.ts');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (name) => (path.resolve(name) === file ? source : read(name));
  host.fileExists = (name) => path.resolve(name) === file || exists(name);
  const getSource = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    path.resolve(name) === file
      ? ts.createSourceFile(name, source, version)
      : getSource(name, version, ...rest);
  const program = ts.createProgram([file], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}
