/**
 * Where the quoted history of an emailed reply begins (the previous message its client
 * quoted under it, or the sender's signature), so that the ticket view folds it. A small,
 * stated set of patterns, not a guess at every client: an attribution line (`On … wrote:` in
 * the common languages, also wrapped over two lines), a separator (`-----Original Message-----`,
 * Outlook's line of underscores or its `From:`/`Sent:` header block), the signature delimiter
 * `-- `, or a block of `>` lines that runs to the end. (email-reply-parser, the maintained
 * port of GitHub's parser, needs Node 22; Stega runs on Node 20.)
 */

const ATTRIBUTION =
  /^\s*(on\s.+\swrote|le\s.+\sa\s[ée]crit|am\s.+\sschrieb.*|el\s.+\sescribi[óo]|em\s.+\sescreveu|op\s.+\sschreef.*|il\s.+\sha\sscritto)\s*:\s*$/i;
const SEPARATOR =
  /^\s*(-{2,}\s*(original message|forwarded message|mensagem original|message d'origine|urspr[üu]ngliche nachricht|mensaje original)\s*-{2,}|_{20,})\s*$/i;
const HEADER_FROM = /^\s*(from|de|von|van)\s*:\s*\S/i;
const HEADER_NEXT = /^\s*(sent|date|envoy[ée]|gesendet|enviado|to|subject)\s*:/i;
const SIGNATURE = /^-- ?$/;

/** The index in `body` where its quoted history or signature begins; null when it has none. */
export function quotedTextStart(body: string): number | null {
  const lines = body.split('\n');
  const starts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += line.length + 1;
  }
  const at = (i: number) => (lines[i] ?? '').replace(/\r$/, '');
  let found: number | undefined;
  for (let i = 0; i < lines.length && found === undefined; i++) {
    const line = at(i);
    const wrapped = `${line} ${at(i + 1)}`;
    if (
      ATTRIBUTION.test(line) ||
      (/^\s*(on|le|am|el|em|op|il)\s/i.test(line) && ATTRIBUTION.test(wrapped)) ||
      SEPARATOR.test(line) ||
      SIGNATURE.test(line) ||
      (HEADER_FROM.test(line) && HEADER_NEXT.test(at(i + 1)) && i > 0 && at(i - 1).trim() === '')
    ) {
      found = i;
    }
  }
  if (found === undefined) {
    // a block of `>` lines (blank lines inside it allowed) that runs to the end
    let i = lines.length - 1;
    while (i >= 0 && at(i).trim() === '') i--;
    let first: number | undefined;
    while (i >= 0 && (at(i).startsWith('>') || at(i).trim() === '')) {
      if (at(i).startsWith('>')) first = i;
      i--;
    }
    found = first;
  }
  if (found === undefined) return null;
  const start = starts[found] ?? 0;
  // only what follows something of the reply's own is folded
  return body.slice(0, start).trim() === '' ? null : start;
}
