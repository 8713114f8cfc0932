import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** README.md and every Markdown file under docs/, relative to the root. */
function pages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir)).flatMap((name) => {
      const file = path.join(dir, name);
      if (statSync(path.join(ROOT, file)).isDirectory()) return walk(file);
      return name.endsWith('.md') ? [file] : [];
    });
  return ['README.md', ...walk('docs')];
}

/** The lines of a Markdown text outside fenced code blocks, with inline code removed. */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opener?.startsWith(fence)) fence = null;
      continue;
    }
    if (opener) {
      fence = opener;
      continue;
    }
    lines.push(line.replace(/(`+)[^`]*?\1/g, ''));
  }
  return lines;
}

/** The anchors GitHub gives a page's headings (and explicit `<a id>` / `name` anchors). */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of text.split('\n')) {
    for (const m of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? '');
  }
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opener?.startsWith(fence)) fence = null;
      continue;
    }
    if (opener) {
      fence = opener;
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Relative link targets of a Markdown text: `[text](target)`, images, reference definitions. */
export function linksOf(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push(m[1] ?? '');
    }
    const definition = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line)?.[1];
    if (definition) targets.push(definition);
  }
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** Why a link from `page` to `target` is broken, or null when it resolves. */
export function brokenLink(
  page: string,
  target: string,
  read: (file: string) => string | null,
): string | null {
  const [file = '', anchor] = target.split('#', 2);
  const resolved = file
    ? path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURI(file)))
    : page;
  if (resolved.startsWith('..')) return `${target} leaves the repository`;
  const text = read(resolved);
  if (text === null) return `${target}: no file ${resolved}`;
  if (anchor === undefined || anchor === '') return null;
  if (!resolved.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  return anchorsOf(text).has(decodeURIComponent(anchor))
    ? null
    : `${target}: ${resolved} has no heading #${anchor}`;
}

/** A repository file's text, '' for a directory, null when it does not exist. */
function readRepo(file: string): string | null {
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return null;
  return statSync(full).isDirectory() ? '' : readFileSync(full, 'utf8');
}

describe('links in README.md and docs/', () => {
  it('point to files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages()) {
      for (const target of linksOf(readFileSync(path.join(ROOT, page), 'utf8'))) {
        checked += 1;
        const problem = brokenLink(page, target, readRepo);
        if (problem) broken.push(`${page}: ${problem}`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('finds a missing file, a missing heading and a link out of the repository', () => {
    const files: Record<string, string> = {
      'docs/a.md': '# A page\n\n## Retries, circuits and fallbacks\n\n## `PORT` and `HOST`\n',
      'docs/b.md': '# B\n## Twice\n## Twice\n',
    };
    const read = (file: string) => files[file] ?? null;
    expect(brokenLink('docs/b.md', 'a.md#retries-circuits-and-fallbacks', read)).toBeNull();
    expect(brokenLink('docs/b.md', 'a.md#port-and-host', read)).toBeNull();
    expect(brokenLink('docs/b.md', '#twice-1', read)).toBeNull();
    expect(brokenLink('docs/b.md', '#twice-2', read)).toMatch(/no heading #twice-2/);
    expect(brokenLink('docs/b.md', 'a.md#retries', read)).toMatch(/no heading #retries/);
    expect(brokenLink('docs/b.md', 'c.md', read)).toMatch(/no file docs\/c\.md/);
    expect(brokenLink('docs/b.md', '../../x.md', read)).toMatch(/leaves the repository/);
  });

  it('reads links outside code only, and leaves absolute URLs alone', () => {
    const text = [
      'See [a](a.md), ![img](pic.png "title") and [site](https://example.com).',
      '`[not](code.md)` is code.',
      '```md',
      '[also not](fenced.md)',
      '```',
      '[ref]: docs/ref.md',
    ].join('\n');
    expect(linksOf(text)).toEqual(['a.md', 'pic.png', 'docs/ref.md']);
  });
});
