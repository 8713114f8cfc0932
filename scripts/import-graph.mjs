// The graph of relative imports among the TypeScript modules under some directories, read
// from the source text: shared by the import checks (check-import-cycles.mjs,
// check-layers.mjs). Type-only imports count: a knot of types is still a knot for the reader.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository these scripts belong to. */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every package's TypeScript (servers, clients, the web UI, tests, test support, benches). */
export const EVERY_PACKAGE = ['packages', 'test-support', 'bench', 'scripts'].map((dir) =>
  path.join(REPO, dir),
);

/** Directories never read: installed, built or generated code. */
const SKIPPED = new Set(['node_modules', 'dist', 'generated', '.git']);

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return SKIPPED.has(name) ? [] : sources(file);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [file] : [];
  });
}

// static imports and re-exports (`import … from`, `export … from`, `import '…'`)
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

function resolve(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier).replace(/\.js$/, '');
  for (const candidate of [
    `${base}.ts`,
    `${base}.tsx`,
    path.join(base, 'index.ts'),
    path.join(base, 'index.tsx'),
  ]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

/**
 * Absolute module path -> the absolute paths of the modules it imports (relative imports
 * that resolve to a TypeScript file; package imports are left out).
 */
export function importGraph(roots) {
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
  return graph;
}
