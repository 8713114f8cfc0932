import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startSmtpListener } from '../../src/mail/smtp-listener.js';
import { intakeScene, rawMail } from './intake-scene.js';

/** STARTTLS when a certificate is configured, and AUTH when credentials are (a relay in front). */
describe('SMTP listener security', async () => {
  const s = await intakeScene();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  const listener = await startSmtpListener({
    pool: s.pool,
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: 1024 * 1024,
    tls: { certFile, keyFile },
    auth: { username: 'relay', password: 'relay-password' },
    logger: createLogger('silent', 'test'),
  });
  afterAll(async () => {
    await listener.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const transport = (options: {
    auth?: { user: string; pass: string };
    requireTLS?: boolean;
    ignoreTLS?: boolean;
  }) =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port: listener.port,
      secure: false,
      tls: { rejectUnauthorized: false },
      ...options,
    });
  const envelope = { from: 'rui@customer.test', to: ['support@acme.test'] };

  it('upgrades to TLS and takes mail from an authenticated relay', async () => {
    const relay = transport({ requireTLS: true, auth: { user: 'relay', pass: 'relay-password' } });
    const info = await relay.sendMail({
      envelope,
      raw: rawMail({ messageId: 'tls@customer.test' }),
    });
    relay.close();
    expect(info.response).toMatch(/^250 /);
    expect((await s.settled('tls@customer.test'))[0].state).toBe('filed');
  });

  it('refuses a wrong password (535) and mail without AUTH (530)', async () => {
    const wrong = transport({ requireTLS: true, auth: { user: 'relay', pass: 'guess' } });
    await expect(
      wrong.sendMail({ envelope, raw: rawMail({ messageId: 'guess@customer.test' }) }),
    ).rejects.toMatchObject({ responseCode: 535 });
    wrong.close();
    const anonymous = transport({ requireTLS: true });
    await expect(
      anonymous.sendMail({ envelope, raw: rawMail({ messageId: 'anon@customer.test' }) }),
    ).rejects.toMatchObject({ responseCode: 530 });
    anonymous.close();
  });

  it('offers no STARTTLS and no AUTH without a certificate and credentials', async () => {
    const other = nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.listener.port,
      secure: false,
      requireTLS: true,
    });
    await expect(
      other.sendMail({ envelope, raw: rawMail({ messageId: 'notls@customer.test' }) }),
    ).rejects.toThrow(/STARTTLS/);
    other.close();
  });
});
