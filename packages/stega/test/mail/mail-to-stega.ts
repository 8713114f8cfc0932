import nodemailer from 'nodemailer';
import type pg from 'pg';
import { eventually } from '../../../../test-support/eventually.js';

/**
 * For tests that run a real `stega start` with its SMTP listener on `smtpPort`: sends a raw
 * RFC 5322 source from rui@customer.test to support@acme.test, as a customer's server would.
 */
export function customerMailer(smtpPort: number): (raw: string) => Promise<void> {
  return async (raw) => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: smtpPort,
      ignoreTLS: true,
    });
    try {
      await transport.sendMail({
        envelope: { from: 'rui@customer.test', to: ['support@acme.test'] },
        raw,
      });
    } finally {
      transport.close();
    }
  };
}

/** The ticket a received message (its Message-ID without <>) was filed to, once filed. */
export function filedTicket(pool: pg.Pool, messageKey: string): Promise<number> {
  return eventually(async () => {
    const { rows } = await pool.query(
      `select ticket_id from stega.inbound_mail where message_key = $1 and state = 'filed'`,
      [messageKey],
    );
    return rows[0] ? Number(rows[0].ticket_id) : undefined;
  }, `${messageKey} filed`);
}
