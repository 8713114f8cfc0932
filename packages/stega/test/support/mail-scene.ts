import { afterAll } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { createPool } from '../../src/db/pool.js';
import { createEmailSender } from '../../src/delivery/transport/smtp.js';

/**
 * What delivery tests share, inside a `describe`: a fresh Stega database with a pool of
 * `poolSize`, an SMTP sink and an email sender writing to it; closed after the suite, once the
 * suite's own later `afterAll` hooks (retriers, receivers) have run (vitest runs them as a stack).
 */
export async function mailScene(poolSize: number) {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, poolSize);
  const smtp = await startSmtpSink();
  const email = createEmailSender({
    smtpUrl: smtp.url,
    from: 'stega@example.test',
    mailDir: '/nonexistent',
  });
  afterAll(async () => {
    email.close();
    await Promise.all([pool.end(), smtp.stop()]);
  });
  return { db, pool, smtp, email };
}
