import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** When the message was accepted (Date.now()). */
  at: number;
  header(name: string): string | undefined;
}

/** A real SMTP server on 127.0.0.1 that keeps every message it receives. */
export async function startSmtpSink(): Promise<{
  url: string;
  messages: ReceivedMail[];
  stop(): Promise<void>;
}> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const headerBlock = raw.split(/\r?\n\r?\n/)[0] ?? '';
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          at: Date.now(),
          header(name) {
            const match = headerBlock.match(new RegExp(`^${name}:\\s*(.*)$`, 'im'));
            return match?.[1]?.trim();
          },
        });
        callback();
      });
    },
  });
  // a client killed mid-session resets its connection; that is the client's fault, not ours
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
