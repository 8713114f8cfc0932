import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('configuration from the environment', () => {
  it('has documented defaults', () => {
    const config = loadConfig({}, '/srv/stega');
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      dataDir: '/srv/stega/.stega',
      timeZone: 'UTC',
      slaDeadIntervalSeconds: 120,
      slaWorkers: 2,
      slaWarningShare: 0.8,
      slaRetryAfterMaxSeconds: 3600,
      coopPageSize: 50,
      reportEmails: [],
      logLevel: 'info',
    });
    expect(config.subconsumerName).toMatch(/^[^.\s]+-\d+$/);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgresql://u:p@db:5432/stega',
      STEGA_TIME_ZONE: 'Europe/Lisbon',
      SMTP_URL: 'smtp://mail:25',
      REPORT_EMAILS: 'a@x.test, b@x.test',
      REPORT_WEBHOOK_URL: 'https://hooks.example.test/report',
      SLA_DEAD_INTERVAL_SECONDS: '5',
      SLA_WORKERS: '4',
      SLA_WARNING_SHARE: '0.9',
      SLA_RETRY_AFTER_MAX_SECONDS: '600',
      COOP_PAGE_SIZE: '0',
      SUBCONSUMER_NAME: 'replica-1',
      STEGA_ADMIN_TOKEN: 'a-long-enough-admin-token-0123456789',
    });
    expect(config).toMatchObject({
      port: 8080,
      timeZone: 'Europe/Lisbon',
      reportEmails: ['a@x.test', 'b@x.test'],
      slaDeadIntervalSeconds: 5,
      slaWorkers: 4,
      slaWarningShare: 0.9,
      slaRetryAfterMaxSeconds: 600,
      coopPageSize: 0,
      subconsumerName: 'replica-1',
      adminToken: 'a-long-enough-admin-token-0123456789',
    });
  });

  it('names every bad variable in one error', () => {
    const attempt = () =>
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://nope',
        STEGA_TIME_ZONE: 'Mars/Olympus',
        SLA_WARNING_SHARE: '1.5',
        SLA_RETRY_AFTER_MAX_SECONDS: '0',
        SUBCONSUMER_NAME: 'has.dot',
        STEGA_ADMIN_TOKEN: 'short',
      });
    expect(attempt).toThrow(ConfigError);
    const message = (() => {
      try {
        attempt();
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const expected of [
      /PORT must be an integer in 0\.\.65535, got "eighty"/,
      /DATABASE_URL must be a postgres: or postgresql:\/\/ URL, got "mysql:\/\/nope"/,
      /STEGA_TIME_ZONE must be an IANA time zone, got "Mars\/Olympus"/,
      /SLA_WARNING_SHARE must be a number in \(0, 1\], got "1.5"/,
      /SLA_RETRY_AFTER_MAX_SECONDS must be an integer in 1\.\.86400, got "0"/,
      /SUBCONSUMER_NAME must be non-empty and contain no dot or space/,
      /STEGA_ADMIN_TOKEN must be at least 32 characters \(it has 5\); make one with `openssl rand -hex 32`/,
    ]) {
      expect(message).toMatch(expected);
    }
  });

  it('parses WEBHOOK_ALLOWED_NETWORKS and refuses a bad entry or a refused report webhook', () => {
    expect(loadConfig({}).webhookAllowedNetworks).toEqual([]);
    expect(
      loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, 127.0.0.1,fd00::/8' })
        .webhookAllowedNetworks,
    ).toEqual(['10.0.0.0/8', '127.0.0.1/32', 'fd00::/8']);
    expect(() => loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8,intranet' })).toThrow(
      /WEBHOOK_ALLOWED_NETWORKS must be comma-separated CIDRs: "intranet" is not a CIDR network/,
    );
    expect(() => loadConfig({ REPORT_WEBHOOK_URL: 'http://127.0.0.1:9000/report' })).toThrow(
      /REPORT_WEBHOOK_URL is refused: 127\.0\.0\.1 is a loopback address; list its network in WEBHOOK_ALLOWED_NETWORKS/,
    );
    expect(
      loadConfig({
        REPORT_WEBHOOK_URL: 'http://127.0.0.1:9000/report',
        WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      }).reportWebhookUrl,
    ).toBe('http://127.0.0.1:9000/report');
    expect(() => loadConfig({ REPORT_WEBHOOK_URL: 'https://u:p@hooks.example.test/r' })).toThrow(
      /REPORT_WEBHOOK_URL must not contain credentials/,
    );
  });

  it('rejects a bad report address', () => {
    expect(() => loadConfig({ REPORT_EMAILS: 'ok@x.test, not-an-address' })).toThrow(
      /REPORT_EMAILS has an invalid address: "not-an-address"/,
    );
  });
});
