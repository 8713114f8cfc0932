import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// Stega calls pgque's statement functions, never the engine's SQL by hand. The exceptions
// are Stega's own transactional writes (an alert row and its event in one statement),
// listed here, each marked by a comment (SQL or TypeScript) on the line above the call.
const ALLOWED: Record<string, number> = {
  'db/breaches.ts': 1, // breaches and warnings share one send_batch (sendAll)
  'db/escalations.ts': 2,
};
const MARK = "Stega's own transactional write";

const src = path.resolve(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'generated' ? [] : sources(file);
    return /\.(ts|tsx)$/.test(name) ? [file] : [];
  });
}

/** Every `pgque.<name>` in the file (the package name `@stega/pgque` has no dot after it). */
function engineReferences(file: string): { line: number; text: string; marked: boolean }[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines.flatMap((text, i) =>
    /\bpgque\.[a-z_]/i.test(text)
      ? [{ line: i + 1, text: text.trim(), marked: (lines[i - 1] ?? '').includes(MARK) }]
      : [],
  );
}

describe('one seam to the engine', () => {
  const found = new Map(
    sources(src)
      .map((file) => [path.relative(src, file).split(path.sep).join('/'), file] as const)
      .map(([name, file]) => [name, engineReferences(file)] as const)
      .filter(([, references]) => references.length > 0),
  );

  it('finds pgque SQL only in the listed transactional writes', () => {
    const unexpected = [...found]
      .filter(([name]) => !(name in ALLOWED))
      .map(([name, references]) => `${name}:${references[0]?.line} ${references[0]?.text}`);
    expect(unexpected).toEqual([]);
  });

  it('each listed place is there and says why', () => {
    for (const [name, count] of Object.entries(ALLOWED)) {
      const references = found.get(name) ?? [];
      expect(references, name).toHaveLength(count);
      expect(
        references.filter((reference) => !reference.marked),
        `${name}: a pgque call without "${MARK}" on the line above`,
      ).toEqual([]);
    }
  });
});
