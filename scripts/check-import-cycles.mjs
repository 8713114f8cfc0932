#!/usr/bin/env node
// Fails when the TypeScript modules under the given directories import each other in a
// cycle. Type-only imports count: a cycle of types is still a knot for the reader.
// Usage: node scripts/check-import-cycles.mjs packages/pgque/src [more dirs…]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const roots = process.argv.slice(2);
if (roots.length === 0) {
  console.error('usage: check-import-cycles.mjs <dir> [dir…]');
  process.exit(2);
}

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sources(file);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [file] : [];
  });
}

// static imports and re-exports (`import … from`, `export … from`, `import '…'`)
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

function resolve(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

const graph = new Map();
for (const root of roots) {
  for (const file of sources(path.resolve(root))) {
    const text = readFileSync(file, 'utf8');
    const targets = new Set();
    for (const match of text.matchAll(IMPORT)) {
      const target = resolve(file, match[1] ?? match[2]);
      if (target) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
}

// depth-first search; a back edge to a module on the current path closes a cycle
const state = new Map(); // file -> 'open' | 'done'
const cycles = [];
function visit(file, trail) {
  state.set(file, 'open');
  trail.push(file);
  for (const next of graph.get(file) ?? []) {
    if (state.get(next) === 'open') cycles.push([...trail.slice(trail.indexOf(next)), next]);
    else if (!state.has(next) && graph.has(next)) visit(next, trail);
  }
  trail.pop();
  state.set(file, 'done');
}
for (const file of graph.keys()) if (!state.has(file)) visit(file, []);

const shown = (file) => path.relative(process.cwd(), file);
if (cycles.length > 0) {
  console.error(`import cycles in ${roots.join(', ')}:`);
  for (const cycle of cycles) console.error(`  ${cycle.map(shown).join(' -> ')}`);
  process.exit(1);
}
console.log(`no import cycles among ${graph.size} modules in ${roots.join(', ')}`);
