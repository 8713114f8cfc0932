import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { createLogger } from '../../src/log.js';
import { SmtpListenerConfigError, startSmtpListener } from '../../src/mail/smtp-listener.js';
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

  const plain = {
    pool: s.pool,
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: 1024 * 1024,
    logger: createLogger('silent', 'test'),
  };

  it('will not take AUTH in clear text unless told the network is trusted', async () => {
    const auth = { username: 'relay', password: 'relay-password' };
    await expect(startSmtpListener({ ...plain, auth })).rejects.toThrow(SmtpListenerConfigError);
    await expect(startSmtpListener({ ...plain, auth })).rejects.toThrow(/clear text/);
    // a relay on localhost, explicitly allowed
    const trusted = await startSmtpListener({ ...plain, auth, allowInsecureAuth: true });
    try {
      const relay = nodemailer.createTransport({
        host: '127.0.0.1',
        port: trusted.port,
        secure: false,
        ignoreTLS: true,
        auth: { user: 'relay', pass: 'relay-password' },
      });
      const info = await relay.sendMail({
        envelope,
        raw: rawMail({ messageId: 'trusted-relay@customer.test' }),
      });
      relay.close();
      expect(info.response).toMatch(/^250 /);
    } finally {
      await trusted.stop();
    }
  });

  it('serves at most maxClients connections at once (421 past it)', async () => {
    const small = await startSmtpListener({ ...plain, maxClients: 1 });
    const open: net.Socket[] = [];
    /** Connects and gives the first line the server says, the socket kept open. */
    const greeting = (port: number) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1');
        open.push(socket);
        let text = '';
        socket.on('data', (data) => {
          text += data.toString();
          if (text.includes('\r\n')) resolve(text.split('\r\n')[0] as string);
        });
        socket.on('error', reject);
      });
    try {
      expect(await greeting(small.port)).toMatch(/^220 /);
      expect(await greeting(small.port)).toMatch(/^421 .*Too many/);
      for (const socket of open.splice(0)) socket.destroy();
      await eventually(async () => {
        const line = await greeting(small.port);
        for (const socket of open.splice(0)) socket.destroy();
        return line.startsWith('220 ');
      }, 'a free place once the first client left');
    } finally {
      for (const socket of open) socket.destroy();
      await small.stop();
    }
  });
});
