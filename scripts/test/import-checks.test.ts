// The import checks run by `npm run check` (scripts/check-import-cycles.mjs,
// scripts/check-layers.mjs), run over miniature repositories: each fixture is a temporary
// directory laid out like this one, with the scripts copied into its scripts/, so a check run
// without arguments reads the fixture's packages exactly as it reads ours.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const scripts = path.resolve(import.meta.dirname, '..');
const fixtures: string[] = [];
afterAll(() => {
  for (const dir of fixtures) rmSync(dir, { recursive: true, force: true });
});

/** A miniature repository holding `files` (path -> text) and a copy of the check scripts. */
function repository(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'import-checks-'));
  fixtures.push(root);
  for (const dir of ['packages', 'test-support', 'bench', 'scripts']) {
    mkdirSync(path.join(root, dir), { recursive: true });
  }
  for (const script of ['import-graph.mjs', 'check-import-cycles.mjs', 'check-layers.mjs']) {
    copyFileSync(path.join(scripts, script), path.join(root, 'scripts', script));
  }
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

/** Runs one of the scripts in `root`, from `root`, with no arguments. */
function run(root: string, script: string): { code: number | null; output: string } {
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', script)], {
    cwd: root,
    encoding: 'utf8',
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the import-cycle check', () => {
  it.each([
    ['the engine', 'packages/pgque/src', 'ts'],
    ['the server', 'packages/stega/src', 'ts'],
    ['the web UI', 'packages/stega/web/src', 'tsx'],
    ["a package's tests", 'packages/stega/test/support', 'ts'],
    ['the shared test support', 'test-support', 'ts'],
    ['the benches', 'bench', 'ts'],
  ])('fails on a cycle in %s (%s)', (_, dir, ext) => {
    const root = repository({
      [`${dir}/first.${ext}`]: `import { second } from './second.js';\nexport const first = () => second;\n`,
      [`${dir}/second.${ext}`]: `import { first } from './first';\nexport const second = () => first;\n`,
    });
    const { code, output } = run(root, 'check-import-cycles.mjs');
    expect(code, output).toBe(1);
    expect(output).toContain(`${dir}/first.${ext} -> ${dir}/second.${ext} -> ${dir}/first.${ext}`);
  });

  it('fails on a cycle across packages and through type-only imports and re-exports', () => {
    const root = repository({
      'test-support/scene.ts': `import type { Step } from '../packages/stega/test/steps.js';\nexport type Scene = Step[];\n`,
      'packages/stega/test/steps.ts': `export * from './step.js';\n`,
      'packages/stega/test/step.ts': `import type { Scene } from '../../../test-support/scene.js';\nexport type Step = { scene?: Scene };\n`,
    });
    const { code, output } = run(root, 'check-import-cycles.mjs');
    expect(code, output).toBe(1);
    expect(output).toContain('test-support/scene.ts -> packages/stega/test/steps.ts');
  });

  it('passes imports that form no cycle, packages and built code left out', () => {
    const root = repository({
      'packages/stega/src/a.ts': `import { b } from './b.js';\nimport pg from 'pg';\nexport const a = [b, pg];\n`,
      'packages/stega/src/b.ts': `import { c } from './lib/index.js';\nexport const b = c;\n`,
      'packages/stega/src/lib/index.ts': `export const c = 1;\n`,
      'packages/stega/web/src/App.tsx': `import { b } from '../../src/b.js';\nexport const App = b;\n`,
      // a knot in installed or built code is not ours to untie
      'packages/stega/node_modules/x/a.ts': `import './b';\n`,
      'packages/stega/node_modules/x/b.ts': `import './a';\n`,
      'packages/stega/dist/a.ts': `import './b';\n`,
      'packages/stega/dist/b.ts': `import './a';\n`,
    });
    const { code, output } = run(root, 'check-import-cycles.mjs');
    expect(code, output).toBe(0);
    expect(output).toContain('no import cycles among 4 modules');
  });

  it('passes this repository', () => {
    const result = spawnSync(process.execPath, [path.join(scripts, 'check-import-cycles.mjs')], {
      encoding: 'utf8',
    });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
  });
});

describe('the layer check', () => {
  it.each([
    ['db/', 'db/reports.ts', '../jobs/report-period.js', 'jobs/report-period.ts'],
    ['db/', 'db/policies.ts', '../services/errors.js', 'services/errors.ts'],
    ['domain/', 'domain/clock.ts', '../db/clocks.js', 'db/clocks.ts'],
  ])('fails when %s imports a higher layer (%s -> %s)', (_, from, specifier, to) => {
    const src = 'packages/stega/src';
    const root = repository({
      [`${src}/${from}`]: `import type { X } from '${specifier}';\nexport type Y = X;\n`,
      [`${src}/${to}`]: 'export type X = number;\n',
    });
    const { code, output } = run(root, 'check-layers.mjs');
    expect(code, output).toBe(1);
    expect(output).toContain(`${src}/${from} imports ${src}/${to}`);
  });

  it('passes imports downwards, within a layer and of the modules directly in src/', () => {
    const src = 'packages/stega/src';
    const root = repository({
      [`${src}/domain/clock.ts`]: `import { z } from './zone.js';\nexport const clock = z;\n`,
      [`${src}/domain/zone.ts`]: 'export const z = 0;\n',
      [`${src}/db/clocks.ts`]: `import { clock } from '../domain/clock.js';\nimport { EVENTS } from '../events.js';\nexport const c = [clock, EVENTS];\n`,
      [`${src}/events.ts`]: 'export const EVENTS = [];\n',
      [`${src}/services/clocks.ts`]: `import { c } from '../db/clocks.js';\nexport const s = c;\n`,
      [`${src}/jobs/follow.ts`]: `import { s } from '../services/clocks.js';\nexport const j = s;\n`,
    });
    const { code, output } = run(root, 'check-layers.mjs');
    expect(code, output).toBe(0);
  });

  it('passes this repository', () => {
    const result = spawnSync(process.execPath, [path.join(scripts, 'check-layers.mjs')], {
      encoding: 'utf8',
    });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
  });
});
