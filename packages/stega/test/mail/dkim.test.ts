import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { emailSenderOf } from '../../src/delivery/transport/smtp.js';
import { startScriptedSmtp } from './scripted-smtp.js';

/**
 * DKIM: mail Stega sends from a mailbox's domain reaches a real SMTP server signed, and a
 * maintained verifier (mailauth), given the DNS record the docs tell you to publish, finds
 * the signature valid; a domain not listed goes unsigned; bad settings are refused by name.
 */
describe('DKIM signing of outgoing mail', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-dkim-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = path.join(dir, 'dkim.pem');
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const publicKeyBase64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  // the TXT record at stega2026._domainkey.acme.test, as docs/mail.md says to publish it
  const resolver = async (name: string, type: string) => {
    if (type === 'TXT' && name === 'stega2026._domainkey.acme.test') {
      return [[`v=DKIM1; k=rsa; p=${publicKeyBase64}`]];
    }
    throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
  };
  const smtp = await startScriptedSmtp();
  afterAll(() => smtp.stop());
  const env = {
    SMTP_URL: smtp.url,
    STEGA_DATA_DIR: dir,
    DKIM_SELECTOR: 'stega2026',
    DKIM_PRIVATE_KEY_FILE: keyFile,
    DKIM_DOMAINS: 'acme.test',
  };

  it("signs a reply from a mailbox's domain so that the receiver verifies it", async () => {
    const sender = emailSenderOf(loadConfig(env, dir));
    try {
      await sender.send({
        from: { name: 'Ana at Acme Support', address: 'support@acme.test' },
        to: [{ name: 'Rui Costa', address: 'rui@customer.test' }],
        subject: 'Re: Printer on fire',
        text: 'We are on it.\n',
        html: '<p>We are on it.</p>',
        messageId: '<reply-1@acme.test>',
      });
    } finally {
      sender.close();
    }
    const [mail] = smtp.withMessageId('<reply-1@acme.test>');
    expect(mail?.raw).toMatch(/^DKIM-Signature: .*d=acme\.test/m);
    const verified = await dkimVerify(Buffer.from(mail?.raw ?? ''), { resolver });
    expect(verified.results.map((r: { status: { result: string } }) => r.status.result)).toEqual([
      'pass',
    ]);

    // the same bytes with the body changed in transit no longer verify
    const tampered = (mail?.raw ?? '').replace('We are on it.', 'We are NOT on it.');
    const broken = await dkimVerify(Buffer.from(tampered), { resolver });
    expect(broken.results[0]?.status.result).not.toBe('pass'); // mailauth: neutral, body hash did not verify
  });

  it('leaves mail from a domain it was not given unsigned', async () => {
    const sender = emailSenderOf(loadConfig(env, dir));
    try {
      await sender.send({
        from: { name: 'Stega', address: 'stega@other.test' },
        to: 'oncall@acme.test',
        subject: 'Ticket #7 breached',
        text: 'Breach\n',
        messageId: '<alert-7@other.test>',
      });
    } finally {
      sender.close();
    }
    const [mail] = smtp.withMessageId('<alert-7@other.test>');
    expect(mail?.raw).toBeDefined();
    expect(mail?.raw).not.toMatch(/^DKIM-Signature:/m);
  });

  it('refuses incomplete or unreadable settings, naming the variable', () => {
    const base = { STEGA_DATA_DIR: dir };
    expect(() => loadConfig({ ...base, DKIM_SELECTOR: 'stega2026' }, dir)).toThrow(
      /DKIM_SELECTOR and DKIM_PRIVATE_KEY_FILE go together/,
    );
    expect(() =>
      loadConfig({ ...base, DKIM_SELECTOR: 'bad selector', DKIM_PRIVATE_KEY_FILE: keyFile }, dir),
    ).toThrow(/DKIM_SELECTOR must be a DNS name/);
    const notAKey = path.join(dir, 'not-a-key.pem');
    writeFileSync(notAKey, 'hello');
    expect(() =>
      loadConfig({ ...base, DKIM_SELECTOR: 's1', DKIM_PRIVATE_KEY_FILE: notAKey }, dir),
    ).toThrow(/DKIM_PRIVATE_KEY_FILE does not hold a PEM private key/);
    expect(() =>
      loadConfig(
        { ...base, DKIM_SELECTOR: 's1', DKIM_PRIVATE_KEY_FILE: path.join(dir, 'none.pem') },
        dir,
      ),
    ).toThrow(/DKIM_PRIVATE_KEY_FILE cannot be read/);
    expect(() => loadConfig({ ...base, DKIM_DOMAINS: 'acme.test' }, dir)).toThrow(
      /DKIM_DOMAINS is set but DKIM_SELECTOR and DKIM_PRIVATE_KEY_FILE are not/,
    );
  });
});
