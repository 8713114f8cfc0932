// Prints, gzipped, the SQL that migrate() applied to schema stega at a git revision (a
// release): its migrations in order, each recorded in stega.schema_migration, then its
// function files in manifest order where the revision has them. The upgrade test
// (test/db/upgrade.test.ts) starts from it. At a new release:
//   node packages/stega/scripts/release-schema-sql.mjs <commit> > packages/stega/test/fixtures/schema-<commit>.sql.gz
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';

const ref = process.argv[2];
if (!ref) {
  console.error('usage: release-schema-sql.mjs <git revision>');
  process.exit(2);
}
const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
const git = (...args) =>
  execFileSync('git', args, {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
const commit = git('rev-parse', '--short', `${ref}^{commit}`).trim();
const show = (file) => git('show', `${commit}:${file}`);
const listed = (dir) =>
  git('ls-tree', '--name-only', `${commit}:${dir}`).split('\n').filter(Boolean);

const migrations = listed('packages/stega/src/db/migrations')
  .filter((file) => /^\d{6}_[a-z0-9_]+\.sql$/.test(file))
  .sort();
let functions = [];
try {
  functions = show('packages/stega/sql/install.manifest')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
} catch {
  // before the function files, the migrations held every function
}

const parts = [
  `-- schema stega at ${commit}, as its migrate() applied it (scripts/release-schema-sql.mjs)`,
  'begin;',
  'create schema if not exists stega;',
  'create table if not exists stega.schema_migration (id int primary key, name text not null, applied_at timestamptz not null default now());',
  ...migrations.map((file) =>
    [
      `-- ${file}`,
      show(`packages/stega/src/db/migrations/${file}`).trimEnd(),
      `insert into stega.schema_migration (id, name) values (${Number(file.slice(0, 6))}, '${file.slice(7, -4)}');`,
    ].join('\n'),
  ),
  ...functions.map(
    (file) => `-- ${file}\n${show(`packages/stega/sql/functions/${file}`).trimEnd()}`,
  ),
  'commit;',
];
process.stdout.write(gzipSync(`${parts.join('\n\n')}\n`));
