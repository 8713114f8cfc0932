import path from 'node:path';
import { type Client, connect } from '@stega/pgque';
import { createEmailSender, type EmailSender } from '../channels/email.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';

/** What both workers need: a queue client and an email sender, closed together. */
export interface WorkerResources {
  client: Client;
  email: EmailSender;
  publicUrl: string;
  close(): Promise<void>;
}

export async function openWorkerResources(
  config: Config,
  databaseUrl: string,
  logger: Logger,
): Promise<WorkerResources> {
  const client = await connect(databaseUrl, { max: 4, logger });
  const email = createEmailSender({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    mailDir: path.join(config.dataDir, 'mail'),
  });
  return {
    client,
    email,
    publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
    close: async () => {
      email.close();
      await client.close();
    },
  };
}
