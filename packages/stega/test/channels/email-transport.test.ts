import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { createEmailSender, type EmailMessage } from '../../src/delivery/transport/smtp.js';

const message: EmailMessage = {
  to: 'oncall@example.test',
  subject: 'Ticket #7 escalated',
  text: 'Acknowledge (stops the escalation): https://help.example.test/acknowledge?token=live\n',
  messageId: '<escalation-7-L1@stega>',
};

interface AuthSeen {
  username: string | undefined;
  password: string | undefined;
  secure: boolean;
}

/**
 * A real SMTP server that accepts AUTH (PLAIN, LOGIN) even on a plain connection, as a
 * careless relay would, and records every AUTH it was given; STARTTLS (smtp-server's own
 * self-signed certificate) only when `starttls`.
 */
async function startAuthServer(starttls: boolean) {
  const auths: AuthSeen[] = [];
  const received: string[] = [];
  const server = new SMTPServer({
    allowInsecureAuth: true,
    authOptional: true,
    authMethods: ['PLAIN', 'LOGIN'],
    disabledCommands: starttls ? [] : ['STARTTLS'],
    logger: false,
    onAuth(auth, session, callback) {
      auths.push({
        username: auth.username,
        password: auth.password ?? undefined,
        secure: session.secure,
      });
      callback(null, { user: auth.username });
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    auths,
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the email transport: credentials only over TLS, development mail kept private', async () => {
  const plain = await startAuthServer(false);
  const tls = await startAuthServer(true);
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all([plain.stop(), tls.stop()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const tmp = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-mail-'));
    dirs.push(dir);
    return dir;
  };
  const send = async (smtpUrl: string, allowPlaintextAuth?: boolean) => {
    const sender = createEmailSender({
      smtpUrl,
      from: 'Stega <stega@localhost>',
      mailDir: tmp(),
      ...(allowPlaintextAuth === undefined ? {} : { allowPlaintextAuth }),
    });
    try {
      await sender.send(message);
      return null;
    } catch (error) {
      return error as Error & { code?: string };
    } finally {
      sender.close();
    }
  };

  it('refuses to send credentials to a server that offers no TLS: the send fails before AUTH', async () => {
    const error = await send(`smtp://stega:hunter2@127.0.0.1:${plain.port}`);
    expect(error?.message).toMatch(/STARTTLS/i);
    expect(plain.auths).toEqual([]);
    expect(plain.received).toEqual([]);
  });

  it('sends them over STARTTLS when the server offers it', async () => {
    const error = await send(
      `smtp://stega:hunter2@127.0.0.1:${tls.port}?tls.rejectUnauthorized=false`,
    );
    expect(error).toBeNull();
    expect(tls.auths).toEqual([{ username: 'stega', password: 'hunter2', secure: true }]);
    expect(tls.received).toHaveLength(1);
  });

  it('sends them in the clear only with SMTP_ALLOW_PLAINTEXT_AUTH (a local development server)', async () => {
    expect(await send(`smtp://stega:hunter2@127.0.0.1:${plain.port}`, true)).toBeNull();
    expect(plain.auths).toEqual([{ username: 'stega', password: 'hunter2', secure: false }]);
    // no credentials, nothing to protect: a plain server is fine
    expect(await send(`smtp://127.0.0.1:${plain.port}`)).toBeNull();
    expect(plain.received).toHaveLength(2);
  });

  it('writes development mail 0600 in a 0700 folder, an older 0755 folder narrowed', async () => {
    const root = tmp();
    const mailDir = path.join(root, 'mail');
    mkdirSync(mailDir, { mode: 0o755 });
    expect(statSync(mailDir).mode & 0o777).toBe(0o755);
    const sender = createEmailSender({ smtpUrl: undefined, from: 'Stega <s@localhost>', mailDir });
    await sender.send(message);
    sender.close();
    expect(statSync(mailDir).mode & 0o777).toBe(0o700);
    const files = readdirSync(mailDir);
    expect(files).toHaveLength(1);
    expect(statSync(path.join(mailDir, files[0] as string)).mode & 0o777).toBe(0o600);
    // a folder made by Stega is 0700 from the start
    const fresh = path.join(root, 'fresh', 'mail');
    createEmailSender({ smtpUrl: undefined, from: 's@localhost', mailDir: fresh }).close();
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
  });
});

/**
 * The sender's pool of connections: a real SMTP server that holds every message's DATA until
 * the test lets them go, counting the connections opened. Messages that wait together travel
 * on connections of their own, up to 16, or up to the URL's maxConnections.
 */
describe('the SMTP connection pool', () => {
  async function startHoldingServer() {
    const held: (() => void)[] = [];
    let opened = 0;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onConnect(_session, callback) {
        opened += 1;
        callback();
      },
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => held.push(() => callback()));
      },
    });
    server.on('error', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    return {
      url: `smtp://127.0.0.1:${port}`,
      held,
      opened: () => opened,
      release: () => {
        for (const answer of held.splice(0)) answer();
      },
      stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  const sendAll = (sender: ReturnType<typeof createEmailSender>, n: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        sender.send({ ...message, messageId: `<pool-${i}-${Date.now()}@stega>` }),
      ),
    );

  it('opens up to 16 connections while messages wait (nodemailer alone: 5)', async () => {
    const server = await startHoldingServer();
    const sender = createEmailSender({
      smtpUrl: server.url,
      from: 's@localhost',
      mailDir: os.tmpdir(),
    });
    try {
      const sent = sendAll(sender, 16);
      await eventually(() => server.held.length === 16, '16 messages held at once');
      expect(server.opened()).toBe(16);
      server.release();
      await sent;
    } finally {
      server.release();
      sender.close();
      await server.stop();
    }
  });

  it("keeps to the URL's maxConnections", async () => {
    const server = await startHoldingServer();
    const sender = createEmailSender({
      smtpUrl: `${server.url}?maxConnections=3`,
      from: 's@localhost',
      mailDir: os.tmpdir(),
    });
    try {
      const sent = sendAll(sender, 6);
      await eventually(() => server.held.length === 3, 'the first 3 held');
      server.release();
      await eventually(() => server.held.length === 3, 'the next 3 held');
      server.release();
      await sent;
      expect(server.opened()).toBe(3);
    } finally {
      server.release();
      sender.close();
      await server.stop();
    }
  });
});
