/**
 * A message's identity for de-duplication and threading: its Message-ID without the angle
 * brackets (`abc@host`), read from the header block as it streams in.
 */

/** The Message-ID of a header block, unfolded and without `<>`; undefined when it has none. */
export function messageIdOf(headerBlock: string): string | undefined {
  const unfolded = headerBlock.replace(/\r?\n[ \t]+/g, ' ');
  const match = /^message-id[ \t]*:[ \t]*(.*)$/im.exec(unfolded);
  const value = match?.[1] ? messageKeyOf(match[1]) : undefined;
  return value || undefined;
}

/** `<abc@host>` (or a bare `abc@host`) as its key `abc@host`; '' for nothing usable. */
export function messageKeyOf(value: string): string {
  const bracketed = /<([^<>\s]+)>/.exec(value);
  const key = bracketed?.[1] ?? value.trim().split(/\s+/)[0] ?? '';
  return key.slice(0, 900);
}

/** Every `<id>` in a References or In-Reply-To value, as keys, in order. */
export function messageKeysIn(value: string | string[] | undefined): string[] {
  const text = Array.isArray(value) ? value.join(' ') : (value ?? '');
  const keys = [...text.matchAll(/<([^<>\s]+)>/g)].map((m) => (m[1] ?? '').slice(0, 900));
  if (keys.length === 0 && text.trim()) keys.push(...text.trim().split(/\s+/));
  return keys.filter(Boolean);
}

/** The longest header block read before giving up on finding a Message-ID in it. */
export const HEADER_SCAN_LIMIT = 256 * 1024;

/** Finds the end of the header block in what was read so far: the index after the blank line. */
export function headerEnd(head: Buffer): number | undefined {
  const crlf = head.indexOf('\r\n\r\n');
  const lf = head.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return undefined;
  if (crlf === -1) return lf + 2;
  if (lf === -1) return crlf + 4;
  return Math.min(crlf + 4, lf + 2);
}
