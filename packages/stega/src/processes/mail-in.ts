import { connect, PartitionedConsumer } from '@stega/pgque';
import type pg from 'pg';
import type { Config } from '../config.js';
import {
  MAIL_FILING_CONSUMER,
  MAIL_FILING_SLOTS,
  MAIL_QUEUE,
  MAIL_RECEIVED,
} from '../db/migrate.js';
import { mailOutFromConfig } from '../delivery/mail-out.js';
import { emailSenderOf } from '../delivery/transport/smtp.js';
import type { Logger } from '../log.js';
import { type FilingDeps, fileInboundMail } from '../mail/filing.js';
import { startImapPollers } from '../mail/imap-poller.js';
import { mailReceivedEvent } from '../mail/mail-queue.js';
import { startRawJanitor } from '../mail/raw-janitor.js';
import { baseAddressOf, replySecretLoad } from '../mail/reply-token.js';
import { startSmtpListener } from '../mail/smtp-listener.js';
import type { ServiceContext } from '../services/context.js';
import type { RunningService } from './service.js';

/** The address inside MAIL_FROM (`Stega <stega@localhost>` -> `stega@localhost`). */
function addressIn(mailFrom: string): string {
  return baseAddressOf(/<([^>]+)>/.exec(mailFrom)?.[1] ?? mailFrom);
}

/**
 * mail-in (issue 23): the SMTP listener on INBOUND_SMTP_PORT (0: none), the IMAP pollers,
 * and one worker (`config.subconsumerName`) of the partitioned consumer mail_filing that
 * files each `mail.received` (issue 26): run any number; the MAIL_FILING_SLOTS slots are
 * shared between the live ones (rebalanced when one joins or leaves), each message is filed
 * by the holder of its conversation's slot, and a slot files one message at a time, in the
 * order received, so a reply never overtakes the message it answers. On stop the listener
 * stops taking mail first, then the worker finishes each slot's batch and gives the slots back.
 */
export async function startMailIn(
  config: Config,
  databaseUrl: string,
  pool: pg.Pool,
  logger: Logger,
  /** `imap: false` leaves IMAP polling to others (tests run their pollers themselves). */
  options: { now?: () => Date; imap?: boolean } = {},
): Promise<RunningService & { smtpPort: number | undefined }> {
  const now = options.now ?? (() => new Date());
  const ctx: ServiceContext = {
    pool,
    now,
    warningShare: config.slaWarningShare,
    webhookAllowedNetworks: config.webhookAllowedNetworks,
    timeZone: config.timeZone,
  };
  const replySecret = await replySecretLoad(pool);
  const sender = emailSenderOf(config);
  // acknowledgements are sent from here, after the filing that recorded them commits
  const mailOut = mailOutFromConfig(config, pool, sender, logger);
  const deps: FilingDeps = {
    ctx,
    replySecret,
    rules: {
      newTicketsPerSenderHour: config.inbound.newTicketsPerSenderHour,
      followUpAfterDays: config.inbound.followUpAfterDays,
      reopenWaiting: config.inbound.reopenWaiting,
      ticketAttachmentsMaxBytes: config.inbound.ticketAttachmentsMaxBytes,
      acknowledgementsPerMailboxHour: config.inbound.acknowledgementsPerMailboxHour,
    },
    ownAddresses: [addressIn(config.mailFrom)],
    mailOut,
  };
  const services: RunningService[] = [
    {
      name: 'mail out',
      stop: async () => {
        await mailOut.drain();
        sender.close();
      },
    },
  ];
  const stopAll = async () => {
    for (const service of services.reverse()) await service.stop();
  };
  try {
    const client = await connect(databaseUrl, { max: 6, logger });
    services.push({ name: 'engine client', stop: () => client.close() });
    // A message that cannot be filed does not hold its slot: an unreadable one is
    // quarantined at once, and a failing filing is retried later (nacked: it comes back
    // after the slot's later events) and quarantined after FILING_ATTEMPTS.
    const filer = new PartitionedConsumer(client, MAIL_QUEUE, MAIL_FILING_CONSUMER, {
      slots: MAIL_FILING_SLOTS,
      worker: config.subconsumerName,
      leaseTtl: config.inbound.filingLeaseSeconds * 1000,
      // stega migrate subscribed the slots before any mail came; a missing one is an error
      subscribe: false,
      unknownHandlerPolicy: 'ack',
      pollInterval: 5000,
      logger,
    }).handle(MAIL_RECEIVED, mailReceivedEvent, async (event) => {
      const id = event.payload.inbound_mail_id;
      const outcome = await fileInboundMail(deps, id);
      logger.info({ inboundMailId: id, ...outcome }, 'mail filed');
    });
    await filer.start();
    services.push({ name: 'mail filing worker', stop: () => filer.stop() });
    services.push(startRawJanitor(pool, logger));
    if (options.imap !== false) {
      services.push(
        startImapPollers({
          pool,
          databaseUrl,
          maxMessageBytes: config.inbound.maxMessageBytes,
          pollMs: config.inbound.imapPollSeconds * 1000,
          logger,
          now,
        }),
      );
    }
    let smtpPort: number | undefined;
    if (config.inbound.smtpPort > 0) {
      const tls =
        config.inbound.tlsCertFile && config.inbound.tlsKeyFile
          ? { certFile: config.inbound.tlsCertFile, keyFile: config.inbound.tlsKeyFile }
          : undefined;
      const listener = await startSmtpListener({
        pool,
        host: config.host,
        port: config.inbound.smtpPort,
        maxMessageBytes: config.inbound.maxMessageBytes,
        tls,
        auth: config.inbound.smtpAuth,
        allowInsecureAuth: config.inbound.smtpAllowInsecureAuth,
        maxClients: config.inbound.smtpMaxClients,
        logger,
        now,
      });
      smtpPort = listener.port;
      services.push(listener);
    }
    logger.info({ worker: filer.worker, slots: filer.heldSlots, smtpPort }, 'mail-in started');
    return { name: 'mail-in', smtpPort, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
