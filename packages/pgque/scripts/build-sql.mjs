// Turns sql/ into src/generated/sql.ts so the package never reads files at run time.
// The generated install script is the only install path: `pgque sql` prints it and
// install(pool) executes it, so both are the same act.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sqlDir = path.join(root, 'sql');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** Advisory lock key shared by every installer: hashtext('pgque.install'). */
const INSTALL_LOCK = "hashtext('pgque.install')";

function read(relative) {
  return readFileSync(path.join(sqlDir, relative), 'utf8').trimEnd();
}

function migrations() {
  return readdirSync(path.join(sqlDir, 'migrations'))
    .filter((file) => /^\d{6}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ id: Number(file.slice(0, 6)), name: file.slice(7, -4), file }));
}

/** The manifest lists function files in order; lines starting with '#' are headings. */
function manifest() {
  return read('install.manifest')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

function guardedMigration({ id, name, file }) {
  const body = read(path.join('migrations', file));
  if (body.includes('$pgque_migration$')) throw new Error(`${file} uses the reserved quote tag`);
  const tag = `$m${String(id).padStart(6, '0')}$`;
  return [
    `-- migration ${file}`,
    `do ${tag}`,
    'begin',
    `  if not exists (select 1 from pgque.schema_migration where id = ${id}) then`,
    `    execute $pgque_migration$\n${body}\n$pgque_migration$;`,
    `    insert into pgque.schema_migration (id, name) values (${id}, '${name}');`,
    '  end if;',
    'end',
    `${tag};`,
  ].join('\n');
}

/**
 * The engine's own rules, refused at build time:
 * - one function (with all its overloads) per file, named after it, opening with a header;
 * - every security-definer function or procedure pins search_path with pg_temp last, or a
 *   caller's temporary objects would shadow the engine's types and functions;
 * - the table and sequence names stored in pgque.queue are written once, by create_queue,
 *   and never read back into SQL: identifiers come from the queue id (_event_table).
 */
function checkFunctionFile(file, body) {
  // one function, all its overloads, per file, named after it, opening with its header
  const own = file.slice(0, -'.sql'.length);
  const defined = new Set(
    [...body.matchAll(/^create or replace (?:function|procedure) ([\w.]+)/gm)].map((m) => m[1]),
  );
  if (defined.size !== 1 || !defined.has(own)) {
    throw new Error(`${file}: must define ${own} alone (defines ${[...defined].join(', ')})`);
  }
  if (!body.startsWith(`-- ${own.slice('pgque.'.length)}: `)) {
    throw new Error(
      `${file}: must open with its header comment "-- ${own.slice('pgque.'.length)}: …"`,
    );
  }
  const statements = body.split(/(?=^create or replace (?:function|procedure) )/m).slice(1);
  for (const statement of statements) {
    const header = statement.slice(0, statement.search(/^as \$/m));
    const name = /^create or replace (?:function|procedure) ([\w.]+)/.exec(statement)?.[1];
    if (
      /^security definer$/m.test(header) &&
      !/^set search_path = pgque, pg_catalog, pg_temp$/m.test(header)
    ) {
      throw new Error(
        `${file}: security definer ${name} must set search_path = pgque, pg_catalog, pg_temp`,
      );
    }
  }
  const stored = /\b(?:q|sub|queue)\.queue_(?:data_pfx|event_seq|tick_seq)\b/.exec(body);
  if (stored) {
    throw new Error(
      `${file}: reads ${stored[0]} back into SQL; derive names with pgque._event_table / _queue_sequence`,
    );
  }
}

for (const file of manifest()) checkFunctionFile(file, read(path.join('functions', file)));

const parts = [
  `-- pgque ${version}: complete, idempotent install and upgrade script (generated from sql/).`,
  '-- Apply with psql -v ON_ERROR_STOP=1 -f, or with `pgque install <url>`.',
  'begin;',
  `select pg_advisory_xact_lock(${INSTALL_LOCK});`,
  'set local client_min_messages = warning;',
  'create schema if not exists pgque;',
  'create table if not exists pgque.schema_migration (\n  id int primary key,\n  name text not null,\n  applied_at timestamptz not null default now()\n);',
  read('roles.sql'),
  ...migrations().map(guardedMigration),
  ...manifest().map((file) => `-- ${file}\n${read(path.join('functions', file))}`),
  '-- the event writers for the queues that exist (a fresh install has none; an upgrade may\n-- bring new text), before the grants, which name them\nselect pgque._create_event_writers();',
  read('grants.sql'),
  'commit;',
];

const script = `${parts.join('\n\n')}\n`;
const out = path.join(root, 'src', 'generated');
mkdirSync(out, { recursive: true });
writeFileSync(
  path.join(out, 'sql.ts'),
  [
    '// Generated by scripts/build-sql.mjs from sql/. Do not edit.',
    `export const packageVersion = ${JSON.stringify(version)};`,
    `export const installScript = ${JSON.stringify(script)};`,
    `export const migrationCount = ${migrations().length};`,
    '',
  ].join('\n'),
);
