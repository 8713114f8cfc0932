import { messageIdOf } from './message-key.js';

/**
 * Delivery status notifications (RFC 3464; RFC 6533's `global` variants): a
 * `multipart/report; report-type=delivery-status` whose `message/delivery-status` part says,
 * per recipient, what became of a message, and whose last part returns that message (or its
 * header). Read here from the stored source, independently of mailparser, which folds the
 * status part into the text.
 */

/** What a notification says of one recipient. */
export interface RecipientStatus {
  /** Final-Recipient (else Original-Recipient), lower-case, without its address type. */
  recipient: string;
  /** `failed`, `delayed`, `delivered`, `relayed`, `expanded`. */
  action: string;
  /** The enhanced status code (`5.1.1`), null when absent or malformed. */
  status: string | null;
  /** Diagnostic-Code without its type (`550 5.1.1 … User unknown`), null when absent. */
  diagnostic: string | null;
}

export interface DeliveryReport {
  /** The Message-IDs (without `<>`) of the message reported on. */
  messageKeys: string[];
  recipients: RecipientStatus[];
  /** Reporting-MTA without its type. */
  reportingMta: string | null;
}

/** Whether a Content-Type value is a delivery status notification's. */
export function isDeliveryReportType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const lower = contentType.toLowerCase();
  return (
    /^\s*multipart\/report\b/.test(lower) &&
    /report-type\s*=\s*"?(global-)?delivery-status"?/.test(lower)
  );
}

/** A header block as a list of [lower-case name, unfolded value]. */
function fieldsOf(block: string): [string, string][] {
  const fields: [string, string][] = [];
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    fields.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return fields;
}

/** Splits a header block from its body at the first blank line. */
function splitHead(text: string): { head: string; body: string } {
  if (/^\r?\n/.test(text)) return { head: '', body: text.replace(/^\r?\n/, '') };
  const match = /\r?\n\r?\n/.exec(text);
  if (!match) return { head: text, body: '' };
  return { head: text.slice(0, match.index), body: text.slice(match.index + match[0].length) };
}

function parameter(value: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return match ? (match[1] ?? match[2]) : undefined;
}

function decoded(body: string, encoding: string | undefined): string {
  switch (encoding?.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9a-f]{2})/gi, (_, hex: string) =>
          String.fromCharCode(Number.parseInt(hex, 16)),
        );
    default:
      return body;
  }
}

/** The parts of a multipart body, between its `--boundary` lines (up to `--boundary--`). */
function bodyParts(body: string, boundary: string): string[] {
  const parts: string[] = [];
  let current: string[] | null = null;
  for (const line of body.split(/\r?\n/)) {
    const trimmed = line.trimEnd();
    if (trimmed === `--${boundary}--`) break;
    if (trimmed === `--${boundary}`) {
      if (current) parts.push(current.join('\r\n'));
      current = [];
    } else {
      current?.push(line);
    }
  }
  if (current) parts.push(current.join('\r\n'));
  return parts;
}

/** `rfc822; rui@customer.test` -> `rui@customer.test`. */
function typedValue(value: string | undefined): string | null {
  if (!value) return null;
  const semicolon = value.indexOf(';');
  const text = (semicolon === -1 ? value : value.slice(semicolon + 1)).trim();
  return text || null;
}

function statusOf(fields: [string, string][]): RecipientStatus | undefined {
  const get = (name: string) => fields.find(([key]) => key === name)?.[1];
  const recipient = typedValue(get('final-recipient') ?? get('original-recipient'));
  const action = get('action')?.toLowerCase().split(/[\s(]/)[0];
  if (!recipient || !action) return undefined;
  const status = /^\s*([245]\.\d{1,3}\.\d{1,3})/.exec(get('status') ?? '')?.[1] ?? null;
  return {
    recipient: recipient.replace(/^<|>$/g, '').toLowerCase(),
    action,
    status,
    diagnostic: typedValue(get('diagnostic-code'))?.slice(0, 500) ?? null,
  };
}

/**
 * The report in a notification's source (read once: a notification is small, or returns only
 * a header); undefined when the source is no delivery status notification or has no status.
 */
export function deliveryReportOf(source: Buffer): DeliveryReport | undefined {
  const { head, body } = splitHead(source.toString('latin1'));
  const contentType = fieldsOf(head).find(([name]) => name === 'content-type')?.[1];
  if (!isDeliveryReportType(contentType)) return undefined;
  const boundary = contentType ? parameter(contentType, 'boundary') : undefined;
  if (!boundary) return undefined;
  const report: DeliveryReport = { messageKeys: [], recipients: [], reportingMta: null };
  let found = false;
  for (const part of bodyParts(body, boundary)) {
    const { head: partHead, body: partBody } = splitHead(part);
    const partFields = fieldsOf(partHead);
    const type = (partFields.find(([name]) => name === 'content-type')?.[1] ?? 'text/plain')
      .toLowerCase()
      .split(';')[0]
      ?.trim();
    const encoding = partFields.find(([name]) => name === 'content-transfer-encoding')?.[1];
    const text = decoded(partBody, encoding);
    if (type === 'message/delivery-status' || type === 'message/global-delivery-status') {
      found = true;
      const [perMessage, ...perRecipient] = text.split(/\r?\n\s*\r?\n/).filter((b) => b.trim());
      report.reportingMta = typedValue(
        fieldsOf(perMessage ?? '').find(([name]) => name === 'reporting-mta')?.[1],
      );
      for (const block of perRecipient) {
        const status = statusOf(fieldsOf(block));
        if (status) report.recipients.push(status);
      }
    } else if (
      type === 'message/rfc822' ||
      type === 'message/global' ||
      type === 'text/rfc822-headers' ||
      type === 'message/global-headers' ||
      type === 'message/rfc822-headers'
    ) {
      const key = messageIdOf(splitHead(text).head);
      if (key) report.messageKeys.push(key);
    }
  }
  return found ? report : undefined;
}
