#!/usr/bin/env node
// Fails when a low layer of Stega's server imports a higher one. The bottom layers say which
// directories of src/ they may import; every other directory is above them. Modules directly
// in src/ (config.ts, events.ts, …) belong to no layer.
// Usage: node scripts/check-layers.mjs [src dir, default packages/stega/src]
import path from 'node:path';
import { importGraph, REPO } from './import-graph.mjs';

/** Layer -> the other directories of src/ it may import. */
const MAY_IMPORT = {
  // pure rules of SLA time, policies and tickets: no I/O, nothing of the app
  domain: [],
  // one statement per function over a Queryable: the domain's types and rules only
  db: ['domain'],
};

const src = process.argv[2]
  ? path.resolve(process.argv[2])
  : path.join(REPO, 'packages', 'stega', 'src');
const graph = importGraph([src]);

/** The directory of src/ a module lies in, or null for a module directly in src/. */
function layerOf(file) {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? parts[0] : null;
}

const shown = (file) => path.relative(process.cwd(), file);
const breaches = [];
for (const [file, targets] of graph) {
  const layer = layerOf(file);
  const allowed = MAY_IMPORT[layer];
  if (!allowed) continue;
  for (const target of targets) {
    const other = layerOf(target);
    if (other !== null && other !== layer && !allowed.includes(other)) {
      const may = allowed.length > 0 ? allowed.map((d) => `${d}/`).join(', ') : 'nothing else';
      breaches.push(`  ${shown(file)} imports ${shown(target)}: ${layer}/ may import ${may}`);
    }
  }
}

if (breaches.length > 0) {
  console.error(`upward imports in ${shown(src)}:`);
  for (const breach of breaches) console.error(breach);
  process.exit(1);
}
console.log(`no upward imports among ${graph.size} modules in ${shown(src)}`);
