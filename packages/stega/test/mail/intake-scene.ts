import os from 'node:os';
import nodemailer from 'nodemailer';
import type pg from 'pg';
import { afterAll } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import { inboundMailList } from '../../src/db/inbound-mail.js';
import { createPool } from '../../src/db/pool.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { startSmtpListener } from '../../src/mail/smtp-listener.js';
import { startMailIn } from '../../src/processes/mail-in.js';
import { startTicker } from '../../src/processes/ticker.js';
import type { ServiceContext } from '../../src/services/context.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { createTeam } from '../../src/services/teams.js';

/**
 * What intake tests share: a fresh database, the ticker, a mail-in member filing
 * `mail.received`, Stega's SMTP listener on an ephemeral port, a mailbox
 * support@acme.test (team Support, priority high) and a nodemailer transport to the
 * listener; all stopped after the file.
 */
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export async function intakeScene(env: Record<string, string> = {}) {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 10);
  const logger = createLogger('silent', 'test');
  const config = loadConfig(
    {
      STEGA_DATA_DIR: os.tmpdir(),
      LOG_LEVEL: 'silent',
      INBOUND_SMTP_PORT: '0',
      STEGA_ADMIN_TOKEN: ADMIN_TOKEN,
      ...env,
    },
    os.tmpdir(),
  );
  const ticker = await startTicker(db.url, logger);
  const mailIn = await startMailIn(config, db.url, pool, logger, { imap: false });
  const listener = await startSmtpListener({
    pool,
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: config.inbound.maxMessageBytes,
    logger,
  });
  const ctx: ServiceContext = { pool, now: () => new Date(), warningShare: 0.8 };
  const team = await createTeam(ctx, { name: 'Support' });
  const mailbox = await createMailbox(ctx, {
    address: 'support@acme.test',
    display_name: 'Acme Support',
    team_id: team.id,
    priority: 'high',
  });
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: listener.port,
    secure: false,
    ignoreTLS: true,
  });
  const app = await buildApp({ pool, config, logger });
  /** The HTTP API as the admin, the body parsed as JSON when it is JSON. */
  const admin = async (options: {
    method: 'GET' | 'POST' | 'PATCH' | 'PUT';
    url: string;
    payload?: object;
  }) => {
    const response = await app.inject({
      ...options,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const json = /json/.test(String(response.headers['content-type']));
    return {
      status: response.statusCode,
      headers: response.headers,
      body: json ? JSON.parse(response.body) : response.rawPayload,
    };
  };
  afterAll(async () => {
    await app.close();
    transport.close();
    await listener.stop();
    await mailIn.stop();
    await ticker.stop();
    await pool.end();
  });

  /** The receipts of a message key (Message-ID without <>), once every one is settled. */
  const settled = (messageKey: string) =>
    eventually(async () => {
      const { rows } = await pool.query(
        `select id, state, reason, ticket_id, comment_id, opened_ticket from stega.inbound_mail
          where message_key = $1 order by id`,
        [messageKey],
      );
      return rows.length > 0 && rows.every((r) => r.state !== 'received') ? rows : undefined;
    }, `message ${messageKey} settled`);

  /** Sends a raw RFC 5322 source over SMTP to support@acme.test (or `to`). */
  const sendRaw = (raw: string | Buffer, options: { from?: string; to?: string[] } = {}) =>
    transport.sendMail({
      envelope: {
        from: options.from ?? 'rui@customer.test',
        to: options.to ?? ['support@acme.test'],
      },
      raw,
    });

  const receipts = () => inboundMailList(pool, { limit: 500, offset: 0 });

  return {
    db,
    pool,
    config,
    team,
    mailbox,
    transport,
    listener,
    ctx,
    admin,
    app,
    settled,
    sendRaw,
    receipts,
  };
}

/** A plain RFC 5322 message; `headers` are added after the usual ones. */
export function rawMail(fields: {
  from?: string;
  to?: string;
  cc?: string;
  subject?: string;
  messageId?: string | null;
  headers?: string[];
  body?: string;
}): string {
  const lines = [
    `From: ${fields.from ?? 'Rui Costa <rui@customer.test>'}`,
    `To: ${fields.to ?? 'Acme Support <support@acme.test>'}`,
    ...(fields.cc ? [`Cc: ${fields.cc}`] : []),
    `Subject: ${fields.subject ?? 'VPN is down'}`,
    'Date: Mon, 02 Mar 2026 09:00:00 +0000',
    ...(fields.messageId === null
      ? []
      : [
          `Message-ID: <${fields.messageId ?? `${Math.random().toString(36).slice(2)}@customer.test`}>`,
        ]),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    ...(fields.headers ?? []),
    '',
    fields.body ?? 'Since this morning nobody can connect.',
    '',
  ];
  return lines.join('\r\n');
}

export type IntakeScene = Awaited<ReturnType<typeof intakeScene>>;
export type { pg };
