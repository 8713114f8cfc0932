import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  /** Stable per (alert, recipient): a resend carries the same Message-ID, so mail clients can fold duplicates. */
  messageId: string;
  headers?: Record<string, string>;
}

export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
  close(): void;
}

/**
 * SMTP when `smtpUrl` is set; otherwise each message is written as an .eml file into
 * `mailDir` (development), so nothing is sent anywhere by surprise.
 */
export function createEmailSender(options: {
  smtpUrl: string | undefined;
  from: string;
  mailDir: string;
}): EmailSender {
  if (options.smtpUrl) {
    // a small pool of kept-alive connections: one SMTP handshake per message would cost
    // more than the message itself
    const url = new URL(options.smtpUrl);
    if (!url.searchParams.has('pool')) url.searchParams.set('pool', 'true');
    const transport = nodemailer.createTransport(url.toString());
    return {
      async send(message) {
        await transport.sendMail({ from: options.from, ...message });
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'unix',
  });
  mkdirSync(options.mailDir, { recursive: true });
  return {
    async send(message) {
      const info = await transport.sendMail({ from: options.from, ...message });
      const file = `${Date.now()}-${message.messageId.replace(/[^\w.-]+/g, '_')}.eml`;
      await writeFile(path.join(options.mailDir, file), info.message as Buffer);
    },
    close: () => transport.close(),
  };
}
