import { chmodSync, mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import {
  type CallOutcome,
  DELIVERED,
  type Failure,
  failed,
} from '../../domain/delivery-outcome.js';
import { type DkimSigning, dkimOptionFor } from './dkim.js';

/** A person on a header line: `"Ana at Acme Support" <support@acme.test>`. */
export interface MailAddress {
  name: string;
  address: string;
}

export interface EmailMessage {
  to: string | MailAddress[];
  subject: string;
  text: string;
  /** Stable per (alert, recipient): a resend carries the same Message-ID, so mail clients can fold duplicates. */
  messageId: string;
  headers?: Record<string, string>;
  /** The sender; absent: the sender's own (MAIL_FROM). Also the envelope sender bounces go to. */
  from?: MailAddress;
  cc?: MailAddress[];
  replyTo?: MailAddress;
  /** Threading: the Message-ID answered, and the conversation's (`<id>` each). */
  inReplyTo?: string;
  references?: string[];
  /** An HTML part beside the text one. */
  html?: string;
  /** Files, each a MIME part; a stream is read while the message is sent. */
  attachments?: MailFile[];
}

/** One attached file of a message. */
export interface MailFile {
  filename: string;
  contentType: string;
  content: Buffer | Readable;
}

export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
  close(): void;
}

/**
 * Whether an SMTP URL would send its credentials over a connection that may stay plain: it
 * has a user, and neither `smtps:` nor `secure=true` makes the connection TLS from the start.
 */
export function smtpCredentialsMayTravelPlain(url: URL): boolean {
  const secure = url.protocol === 'smtps:' || url.searchParams.get('secure') === 'true';
  return url.username !== '' && !secure;
}

/**
 * How many SMTP connections the sender opens at most unless SMTP_URL says (maxConnections):
 * nodemailer's 5 fell behind 8 agents replying at once (p99 4.4 s from commit to the relay's
 * 250 against 0.65 s with 16; bench/README.md, replies-out).
 */
const SMTP_POOL_CONNECTIONS = 16;

/**
 * SMTP when `smtpUrl` is set; otherwise each message is written as an .eml file into
 * `mailDir` (development), so nothing is sent anywhere by surprise. The files hold live
 * acknowledge links and sign-in links: each is written 0600, in a directory kept 0700.
 *
 * Credentials only ever travel over TLS: an `smtp://user:pass@…` URL (not `smtps:`, not
 * `secure=true`) requires STARTTLS (nodemailer's `requireTLS`), so a server that does not
 * offer it fails the send before AUTH is sent, unless `allowPlaintextAuth`
 * (SMTP_ALLOW_PLAINTEXT_AUTH, for a local development server).
 */
export function createEmailSender(options: {
  smtpUrl: string | undefined;
  from: string;
  mailDir: string;
  allowPlaintextAuth?: boolean;
  /** Signs each message whose From domain it covers (DKIM_*). */
  dkim?: DkimSigning;
}): EmailSender {
  const withSender = (message: EmailMessage) => {
    const from = message.from ?? options.from;
    const dkim = dkimOptionFor(options.dkim, from);
    return { ...message, from, ...(dkim ? { dkim } : {}) };
  };
  if (options.smtpUrl) {
    // a pool of kept-alive connections: one SMTP handshake per message would cost more than
    // the message itself. Up to SMTP_POOL_CONNECTIONS, opened only while messages wait (a
    // quiet helpdesk keeps one); the URL's maxConnections narrows it for a relay that allows
    // fewer (Microsoft 365: 3)
    const url = new URL(options.smtpUrl);
    if (!url.searchParams.has('pool')) url.searchParams.set('pool', 'true');
    if (!url.searchParams.has('maxConnections')) {
      url.searchParams.set('maxConnections', String(SMTP_POOL_CONNECTIONS));
    }
    if (smtpCredentialsMayTravelPlain(url) && !options.allowPlaintextAuth) {
      url.searchParams.set('requireTLS', 'true');
      url.searchParams.delete('ignoreTLS');
    }
    const transport = nodemailer.createTransport(url.toString());
    return {
      async send(message) {
        await transport.sendMail(withSender(message));
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'unix',
  });
  mkdirSync(options.mailDir, { recursive: true, mode: 0o700 });
  // an older directory (made before this, or by hand) is narrowed too
  chmodSync(options.mailDir, 0o700);
  return {
    async send(message) {
      const info = await transport.sendMail(withSender(message));
      const file = `${Date.now()}-${message.messageId.replace(/[^\w.-]+/g, '_')}.eml`;
      await writeFile(path.join(options.mailDir, file), info.message as Buffer, { mode: 0o600 });
    },
    close: () => transport.close(),
  };
}

/** The settings of the configuration (config.ts) that make its email sender. */
export interface EmailSettings {
  smtpUrl: string | undefined;
  mailFrom: string;
  dataDir: string;
  smtpAllowPlaintextAuth: boolean;
  dkim: DkimSigning | undefined;
}

/** The email sender of a process: SMTP_URL or the mail folder, MAIL_FROM, TLS rule and DKIM. */
export function emailSenderOf(settings: EmailSettings): EmailSender {
  return createEmailSender({
    smtpUrl: settings.smtpUrl,
    from: settings.mailFrom,
    mailDir: path.join(settings.dataDir, 'mail'),
    allowPlaintextAuth: settings.smtpAllowPlaintextAuth,
    dkim: settings.dkim,
  });
}

/** nodemailer's codes of a connection that failed (refused, reset, DNS, TLS). */
const CONNECTION_CODES = new Set(['ECONNECTION', 'ESOCKET', 'EDNS', 'ETLS']);

/**
 * The failure of a send that nodemailer rejected, by the error's fields: the server's reply
 * code (`responseCode`), else nodemailer's `code` (a time-out, a connection that failed, or
 * another of its codes). Its message is kept as the text, for people.
 */
export function smtpFailure(error: unknown): Failure {
  const fields = error as { responseCode?: unknown; code?: unknown; message?: unknown } | null;
  const text = String(fields?.message ?? error);
  const code = typeof fields?.code === 'string' ? fields.code : null;
  if (typeof fields?.responseCode === 'number') {
    return { kind: 'smtp', reply: fields.responseCode, code, text };
  }
  if (code === 'ETIMEDOUT') return { kind: 'timeout', afterMs: null, text };
  if (code !== null && CONNECTION_CODES.has(code)) return { kind: 'network', code, text };
  return { kind: 'smtp', reply: null, code, text };
}

/**
 * Sends one message and says what became of it: delivered, or the failure (smtpFailure). When
 * `signal` aborts first (the attempt's deadline, `timeoutMs`), a time-out: nodemailer cannot
 * abort a send, so its late result is dropped.
 */
export async function emailSend(
  sender: EmailSender,
  message: EmailMessage,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<CallOutcome> {
  const timedOut = failed({
    kind: 'timeout',
    afterMs: timeoutMs,
    text: `email timed out after ${timeoutMs} ms`,
  });
  if (signal.aborted) return timedOut;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<CallOutcome>((resolve) => {
    onAbort = () => resolve(timedOut);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const sent = sender.send(message).then(
    () => DELIVERED,
    (error: unknown) => failed(smtpFailure(error)),
  );
  try {
    return await Promise.race([sent, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** The email channel's circuit key: the SMTP server without credentials, or the mail directory. */
export function emailEndpointOf(smtpUrl: string | undefined): string {
  if (!smtpUrl) return 'mail-dir';
  try {
    const url = new URL(smtpUrl);
    return `${url.protocol}//${url.host}`;
  } catch {
    return 'smtp';
  }
}
