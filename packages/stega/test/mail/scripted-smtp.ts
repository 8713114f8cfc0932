import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message a scripted receiver accepted. */
export interface AcceptedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  raw: string;
  parsed: ParsedMail;
}

/** An SMTP error the receiver answers with (smtp-server sends `code message`). */
function smtpError(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

/**
 * A real SMTP server on 127.0.0.1 (smtp-server) whose answers a test scripts: it accepts by
 * default; `refuseData` makes the next DATA commands fail with a code (a 451 for "later"),
 * `refuseRecipient` refuses an address at RCPT (a 550). It keeps what it accepted, parsed.
 */
export async function startScriptedSmtp() {
  const accepted: AcceptedMail[] = [];
  const dataRefusals: { code: number; message: string }[] = [];
  const refusedRecipients = new Map<string, { code: number; message: string }>();
  let dataAnswers = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = refusedRecipients.get(address.address.toLowerCase());
      callback(refusal ? smtpError(refusal.code, refusal.message) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        dataAnswers += 1;
        const refusal = dataRefusals.shift();
        if (refusal) {
          callback(smtpError(refusal.code, refusal.message));
          return;
        }
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            accepted.push({
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              envelopeTo: session.envelope.rcptTo.map((r) => r.address),
              raw: raw.toString('utf8'),
              parsed,
            });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `smtp://127.0.0.1:${port}`,
    accepted,
    /** DATA commands answered so far (accepted or refused). */
    dataAnswers: () => dataAnswers,
    /** The next `times` DATA commands are answered `code message`. */
    refuseData(code: number, message: string, times = 1) {
      for (let i = 0; i < times; i++) dataRefusals.push({ code, message });
    },
    refuseRecipient(address: string, code: number, message: string) {
      refusedRecipients.set(address.toLowerCase(), { code, message });
    },
    acceptRecipient(address: string) {
      refusedRecipients.delete(address.toLowerCase());
    },
    /** The accepted messages with this Message-ID (`<…>`). */
    withMessageId: (messageId: string) => accepted.filter((m) => m.parsed.messageId === messageId),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type ScriptedSmtp = Awaited<ReturnType<typeof startScriptedSmtp>>;
