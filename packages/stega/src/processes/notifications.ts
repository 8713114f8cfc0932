import { type Client, connect } from '@stega/pgque';
import type { Config } from '../config.js';
import { type EmailSender, emailSenderOf } from '../delivery/transport/smtp.js';
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
  const email = emailSenderOf(config);
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
