#!/usr/bin/env node
// Fails when TypeScript modules import each other in a cycle, anywhere in the repository:
// by default over every package (EVERY_PACKAGE in import-graph.mjs: packages/, test-support/,
// bench/, scripts/), or under the given directories. Type-only imports count.
// Usage: node scripts/check-import-cycles.mjs [dir…]
import path from 'node:path';
import { EVERY_PACKAGE, importGraph } from './import-graph.mjs';

const roots = process.argv.length > 2 ? process.argv.slice(2) : EVERY_PACKAGE;
const shown = (file) => path.relative(process.cwd(), file) || '.';
const graph = importGraph(roots);

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

const where = roots.map(shown).join(', ');
if (cycles.length > 0) {
  console.error(`import cycles in ${where}:`);
  for (const cycle of cycles) console.error(`  ${cycle.map(shown).join(' -> ')}`);
  process.exit(1);
}
console.log(`no import cycles among ${graph.size} modules in ${where}`);
