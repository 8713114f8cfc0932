import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { install } from '../packages/pgque/src/install.js';
import { migrate } from '../packages/stega/src/db/migrate.js';
import { startTestServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    pgqueTemplate: string;
    stegaTemplate: string;
  }
}

/** Starts one PostgreSQL for the whole run and builds a template database with the engine installed. */
export default async function setup(project: TestProject) {
  const server = await startTestServer(path.join(os.tmpdir(), 'stega-test-pg'));
  const template = `pgque_template_${process.pid}`;
  const stegaTemplate = `stega_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  for (const name of [template, stegaTemplate]) {
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
  }
  await admin.end();

  const templatePool = new pg.Pool({ connectionString: withDatabase(server.adminUrl, template) });
  await install(templatePool);
  await templatePool.end();
  const stegaPool = new pg.Pool({ connectionString: withDatabase(server.adminUrl, stegaTemplate) });
  await migrate(stegaPool, { coopPageSize: 0 });
  await stegaPool.end();

  project.provide('adminUrl', server.adminUrl);
  project.provide('pgqueTemplate', template);
  project.provide('stegaTemplate', stegaTemplate);

  return async () => {
    const cleanup = new pg.Client({ connectionString: server.adminUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${template} with (force)`);
    await cleanup.query(`drop database if exists ${stegaTemplate} with (force)`);
    await cleanup.end();
    await server.stop();
  };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
