import { timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { mailboxListByAddress } from '../db/mailboxes.js';
import type { Logger } from '../log.js';
import type { RunningService } from '../processes/service.js';
import { intakeCommit } from './intake.js';
import { MailboxDirectory } from './mailbox-directory.js';
import { RawUpload, SourceTooLargeError } from './raw-upload.js';
import { baseAddressOf } from './reply-token.js';

/** Recipients one message may have (a 452 past it, per RFC 5321 a client sends the rest later). */
export const MAX_RECIPIENTS = 100;

/** Connections one listener serves at once unless told otherwise (INBOUND_SMTP_MAX_CLIENTS). */
export const DEFAULT_MAX_CLIENTS = 100;

/** The listener's settings cannot work safely (AUTH in clear text without the opt-in). */
export class SmtpListenerConfigError extends Error {}

export interface SmtpListenerOptions {
  pool: pg.Pool;
  host: string;
  /** 0: an ephemeral port (tests). */
  port: number;
  maxMessageBytes: number;
  /** PEM files; STARTTLS is offered only with both. */
  tls?: { certFile: string; keyFile: string } | undefined;
  /** Required AUTH (PLAIN/LOGIN) credentials; none: no AUTH. */
  auth?: { username: string; password: string } | undefined;
  /**
   * Take AUTH over a plain connection (no `tls`): only for a listener on a trusted network.
   * Without it, `auth` without `tls` refuses to start.
   */
  allowInsecureAuth?: boolean;
  /** Connections served at once (default DEFAULT_MAX_CLIENTS); one more is answered 421. */
  maxClients?: number;
  logger: Logger;
  now?: () => Date;
}

type SmtpError = Error & { responseCode: number };

function smtpError(code: number, message: string): SmtpError {
  return Object.assign(new Error(message), { responseCode: code });
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Stega's SMTP listener (`stega mail-in`): accepts mail for configured, enabled mailboxes
 * only (550 for anyone else; plus-addresses `support+tag@…` reach `support@…`), at most
 * `maxMessageBytes` (552 past it, announced by SIZE), STARTTLS with a certificate, AUTH
 * when configured (after STARTTLS only, unless `allowInsecureAuth` says the network is
 * trusted), at most `maxClients` connections at once (421 past it). A message streams into
 * the database chunk by chunk, and DATA is
 * answered 250 only once its receipt and `mail.received` event are committed: a crash
 * before that leaves the sender to retry (451 or a dropped connection), never a lost mail.
 */
export async function startSmtpListener(
  options: SmtpListenerOptions,
): Promise<RunningService & { port: number }> {
  const { pool, logger } = options;
  if (options.auth && !options.tls && !options.allowInsecureAuth) {
    throw new SmtpListenerConfigError(
      'SMTP AUTH without a certificate would take the password in clear text: give the listener a certificate, or allow insecure AUTH for a listener on a trusted network',
    );
  }
  const now = options.now ?? (() => new Date());
  const tls = options.tls
    ? {
        cert: await readFile(options.tls.certFile),
        key: await readFile(options.tls.keyFile),
      }
    : undefined;
  const auth = options.auth;
  const directory = new MailboxDirectory(pool);
  const disabled = [...(tls ? [] : ['STARTTLS']), ...(auth ? [] : ['AUTH'])];

  const onRcptTo = (
    address: { address: string },
    _session: SMTPServerSession,
    callback: (error?: Error | null) => void,
  ) => {
    directory
      .find(baseAddressOf(address.address))
      .then((found) =>
        callback(found ? null : smtpError(550, `5.1.1 <${address.address}>: no such mailbox here`)),
      )
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'mail-in: recipient lookup failed');
        callback(smtpError(451, '4.3.0 temporary failure; try again later'));
      });
  };

  const onData = (
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    callback: (error?: Error | null, message?: string) => void,
  ) => {
    receive(stream, session).then(
      (reply) => callback(null, reply),
      (error: unknown) => callback(error as Error),
    );
  };

  const receive = async (
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
  ): Promise<string> => {
    const upload = new RawUpload(pool, options.maxMessageBytes);
    let tooLarge = false;
    try {
      for await (const chunk of stream) {
        if (tooLarge) continue; // drain the rest; smtp-server answers 552 itself
        try {
          await upload.write(chunk as Buffer);
        } catch (error) {
          if (!(error instanceof SourceTooLargeError)) throw error;
          tooLarge = true;
          await upload.abort();
        }
      }
      if (tooLarge || stream.sizeExceeded) {
        await upload.abort();
        throw smtpError(552, `5.3.4 message larger than ${options.maxMessageBytes} bytes`);
      }
      const recipients = session.envelope.rcptTo.map((r) => r.address);
      const mailboxes = await mailboxListByAddress(pool, [
        ...new Set(recipients.map(baseAddressOf)),
      ]);
      if (mailboxes.length === 0) {
        await upload.abort();
        throw smtpError(550, '5.1.1 none of the recipients is a mailbox here any more');
      }
      const stored = await upload.finish();
      const result = await intakeCommit(pool, stored, {
        source: 'smtp',
        mailboxIds: mailboxes.map((m) => m.id),
        envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
        envelopeTo: recipients,
        receivedAt: now(),
      });
      logger.info(
        {
          inboundMailIds: result.inboundMailIds,
          duplicates: result.duplicates,
          bytes: stored.size,
          messageId: stored.messageId,
        },
        result.inboundMailIds.length > 0 ? 'mail received' : 'mail received again (duplicate)',
      );
      return result.inboundMailIds.length > 0
        ? `2.0.0 queued as ${result.inboundMailIds.join(',')}`
        : '2.0.0 already received';
    } catch (error) {
      if ((error as SmtpError).responseCode) throw error;
      await upload.abort().catch(() => {});
      logger.error({ err: error }, 'mail-in: could not store a message; the sender will retry');
      throw smtpError(451, '4.3.0 could not store the message; try again later');
    }
  };

  const server = new SMTPServer({
    banner: 'Stega mail-in',
    logger: false,
    size: options.maxMessageBytes,
    maxRecipients: MAX_RECIPIENTS,
    maxClients: options.maxClients ?? DEFAULT_MAX_CLIENTS,
    disabledCommands: disabled,
    authOptional: !auth,
    // with a certificate AUTH comes only after STARTTLS; without one only when allowed
    allowInsecureAuth: !tls && options.allowInsecureAuth === true,
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(credentials, _session, callback) {
      if (
        auth &&
        same(credentials.username ?? '', auth.username) &&
        same(credentials.password ?? '', auth.password)
      ) {
        return callback(null, { user: auth.username });
      }
      return callback(smtpError(535, '5.7.8 authentication failed'));
    },
    onRcptTo,
    onData,
  } as ConstructorParameters<typeof SMTPServer>[0]);
  server.on('error', (error) => logger.warn({ err: error }, 'mail-in: SMTP connection error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  logger.info({ port, starttls: Boolean(tls), auth: Boolean(auth) }, 'SMTP listener ready');
  return {
    name: 'smtp-listener',
    port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
