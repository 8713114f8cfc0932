import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('mail-in configuration', () => {
  it('has documented defaults: no listener, 25 MB, 20 new tickets per sender and hour', () => {
    expect(loadConfig({}, '/srv').inbound).toEqual({
      smtpPort: 0,
      maxMessageBytes: 25 * 1024 * 1024,
      tlsCertFile: undefined,
      tlsKeyFile: undefined,
      smtpAuth: undefined,
      smtpAllowInsecureAuth: false,
      smtpMaxClients: 100,
      newTicketsPerSenderHour: 20,
      followUpAfterDays: 7,
      reopenWaiting: true,
      ticketAttachmentsMaxBytes: 100 * 1024 * 1024,
      acknowledgementsPerMailboxHour: 1000,
      imapPollSeconds: 60,
      filingLeaseSeconds: 30,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig(
      {
        INBOUND_SMTP_PORT: '2525',
        INBOUND_MAX_MESSAGE_BYTES: '1048576',
        INBOUND_SMTP_TLS_CERT: 'tls/cert.pem',
        INBOUND_SMTP_TLS_KEY: 'tls/key.pem',
        INBOUND_SMTP_AUTH: 'relay:s3cret:with-colon',
        INBOUND_SMTP_ALLOW_INSECURE_AUTH: 'true',
        INBOUND_SMTP_MAX_CLIENTS: '20',
        INBOUND_NEW_TICKETS_PER_SENDER_HOUR: '5',
        INBOUND_FOLLOW_UP_AFTER_DAYS: '30',
        INBOUND_REOPEN_WAITING: 'false',
        INBOUND_TICKET_ATTACHMENTS_MAX_BYTES: '0',
        INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR: '7',
        INBOUND_IMAP_POLL_SECONDS: '15',
        INBOUND_FILING_LEASE_SECONDS: '8',
      },
      '/srv',
    );
    expect(config.inbound).toEqual({
      smtpPort: 2525,
      maxMessageBytes: 1_048_576,
      tlsCertFile: '/srv/tls/cert.pem',
      tlsKeyFile: '/srv/tls/key.pem',
      smtpAuth: { username: 'relay', password: 's3cret:with-colon' },
      smtpAllowInsecureAuth: true,
      smtpMaxClients: 20,
      newTicketsPerSenderHour: 5,
      followUpAfterDays: 30,
      reopenWaiting: false,
      ticketAttachmentsMaxBytes: 0,
      acknowledgementsPerMailboxHour: 7,
      imapPollSeconds: 15,
      filingLeaseSeconds: 8,
    });
  });

  it('names what is wrong', () => {
    expect(() => loadConfig({ INBOUND_SMTP_PORT: '70000' })).toThrow(
      /INBOUND_SMTP_PORT must be an integer in 0\.\.65535/,
    );
    expect(() => loadConfig({ INBOUND_SMTP_AUTH: 'nopassword' })).toThrow(
      /INBOUND_SMTP_AUTH must be user:password/,
    );
    expect(() => loadConfig({ INBOUND_FILING_LEASE_SECONDS: '1' })).toThrow(
      /INBOUND_FILING_LEASE_SECONDS must be an integer in 2\.\.3600/,
    );
    expect(() => loadConfig({ INBOUND_SMTP_TLS_CERT: 'c.pem' })).toThrow(
      /INBOUND_SMTP_TLS_CERT and INBOUND_SMTP_TLS_KEY go together/,
    );
    expect(() => loadConfig({ INBOUND_SMTP_MAX_CLIENTS: '0' })).toThrow(
      /INBOUND_SMTP_MAX_CLIENTS must be an integer in 1\.\.100000/,
    );
    expect(() => loadConfig({ INBOUND_SMTP_ALLOW_INSECURE_AUTH: 'maybe' })).toThrow(
      /INBOUND_SMTP_ALLOW_INSECURE_AUTH must be 1 or 0/,
    );
  });

  it('refuses AUTH without a certificate unless the listener is on a trusted network', () => {
    expect(() => loadConfig({ INBOUND_SMTP_AUTH: 'relay:pw' })).toThrow(
      /INBOUND_SMTP_AUTH is set without a certificate.*clear text.*INBOUND_SMTP_TLS_CERT.*INBOUND_SMTP_ALLOW_INSECURE_AUTH=true/,
    );
    expect(
      loadConfig({ INBOUND_SMTP_AUTH: 'relay:pw', INBOUND_SMTP_ALLOW_INSECURE_AUTH: 'true' })
        .inbound.smtpAllowInsecureAuth,
    ).toBe(true);
    expect(
      loadConfig({
        INBOUND_SMTP_AUTH: 'relay:pw',
        INBOUND_SMTP_TLS_CERT: 'c.pem',
        INBOUND_SMTP_TLS_KEY: 'k.pem',
      }).inbound.smtpAuth,
    ).toEqual({ username: 'relay', password: 'pw' });
  });
});
