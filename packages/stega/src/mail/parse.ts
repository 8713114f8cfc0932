import { Readable } from 'node:stream';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';
import { messageKeyOf, messageKeysIn } from './message-key.js';

/** A person in a header. */
export interface MailPerson {
  address: string;
  name: string;
}

export interface MailAttachment {
  filename: string;
  contentType: string;
  contentId: string | null;
  inline: boolean;
  content: Buffer;
}

/** What the filer needs of a message, read by mailparser, every text free of NUL bytes. */
export interface MailFacts {
  from: MailPerson | undefined;
  to: MailPerson[];
  cc: MailPerson[];
  /** Delivered-To / X-Original-To / envelope recipients: where a reply token may hide. */
  deliveredTo: string[];
  subject: string;
  text: string;
  html: string | null;
  messageKey: string | undefined;
  inReplyTo: string[];
  references: string[];
  header: (name: string) => string | undefined;
  attachments: MailAttachment[];
}

/** The longest text body kept on a ticket or comment (the source keeps everything). */
export const BODY_MAX_CHARS = 200_000;

const NUL = String.fromCharCode(0);
const clean = (text: string) => text.replaceAll(NUL, '');

function people(value: AddressObject | AddressObject[] | undefined): MailPerson[] {
  const objects = Array.isArray(value) ? value : value ? [value] : [];
  const out: MailPerson[] = [];
  const walk = (entries: AddressObject['value']) => {
    for (const entry of entries) {
      if (entry.group) walk(entry.group);
      else if (entry.address?.includes('@')) {
        out.push({ address: clean(entry.address).toLowerCase(), name: clean(entry.name ?? '') });
      }
    }
  };
  for (const object of objects) walk(object.value);
  return out;
}

function headerText(parsed: ParsedMail, name: string): string | undefined {
  const line = parsed.headerLines.find((h) => h.key === name);
  if (!line) return undefined;
  const colon = line.line.indexOf(':');
  return clean(line.line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ')).trim();
}

/**
 * Parses a source given as its stored chunks (never concatenated here). mailparser reads
 * malformed MIME, 8-bit and mis-declared charsets as best it can; it throws only for a
 * source it cannot read at all (the filer quarantines that).
 */
export async function parseMail(chunks: Buffer[], envelopeTo: string[]): Promise<MailFacts> {
  const parsed = await simpleParser(Readable.from(chunks), {
    skipImageLinks: true,
    skipTextToHtml: true,
    maxHtmlLengthToParse: 5_000_000,
  });
  const header = (name: string) => headerText(parsed, name.toLowerCase());
  const from = people(parsed.from)[0];
  const delivered = ['delivered-to', 'x-original-to', 'envelope-to']
    .flatMap((name) => parsed.headerLines.filter((h) => h.key === name))
    .map((h) =>
      h.line
        .slice(h.line.indexOf(':') + 1)
        .trim()
        .toLowerCase(),
    );
  const text = clean(parsed.text ?? '').slice(0, BODY_MAX_CHARS);
  return {
    from,
    to: people(parsed.to),
    cc: people(parsed.cc),
    deliveredTo: [...delivered, ...envelopeTo.map((a) => a.toLowerCase())],
    subject: clean(parsed.subject ?? '')
      .trim()
      .slice(0, 1000),
    text,
    html: typeof parsed.html === 'string' ? clean(parsed.html) : null,
    messageKey: parsed.messageId ? messageKeyOf(clean(parsed.messageId)) || undefined : undefined,
    inReplyTo: messageKeysIn(parsed.inReplyTo ? clean(parsed.inReplyTo) : undefined),
    references: messageKeysIn(
      Array.isArray(parsed.references)
        ? parsed.references.map(clean)
        : parsed.references
          ? clean(parsed.references)
          : undefined,
    ),
    header,
    attachments: parsed.attachments.map((a) => ({
      filename: clean(a.filename ?? 'attachment').slice(0, 255) || 'attachment',
      contentType: clean(a.contentType || 'application/octet-stream').slice(0, 255),
      contentId: a.contentId ? messageKeyOf(clean(a.contentId)) : null,
      inline: a.contentDisposition === 'inline' || Boolean(a.related),
      content: a.content,
    })),
  };
}
