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

  it('reads TRUST_PROXY as Fastify takes it: false unless set, true, a hop count, or addresses', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,fd00::/8' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'fd00::/8',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/8,ingress' })).toThrow(
      /TRUST_PROXY must be true, false, a hop count or comma-separated addresses and CIDRs; "ingress"/,
    );
  });

  it('rejects a bad report address', () => {
    expect(() => loadConfig({ REPORT_EMAILS: 'ok@x.test, not-an-address' })).toThrow(
      /REPORT_EMAILS has an invalid address: "not-an-address"/,
    );
  });

  it('prints a bad SMTP_URL or DATABASE_URL with its password masked', () => {
    const messageOf = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    for (const [name, raw, shown] of [
      // a password with a slash or an @ makes the URL unreadable: still masked
      [
        'DATABASE_URL',
        'postgres://stega:s3cr/et@db:5432/stega',
        'postgres://stega:***@db:5432/stega',
      ],
      ['DATABASE_URL', 'mysql://stega:hunter2@db/stega', 'mysql://stega:***@db/stega'],
      [
        'DATABASE_URL',
        'pg://db/stega?user=x&password=hunter2',
        'pg://db/stega?user=x&password=***',
      ],
      [
        'SMTP_URL',
        'smtp://mailer:hun#ter2@mail.example.test:587',
        'smtp://mailer:***@mail.example.test:587',
      ],
      [
        'SMTP_URL',
        'http://mailer:hunter2@mail.example.test',
        'http://mailer:***@mail.example.test',
      ],
    ] as const) {
      const message = messageOf({ [name]: raw });
      expect(message, raw).toContain(`${name} must be a`);
      expect(message, raw).toContain(JSON.stringify(shown));
      expect(message, raw).not.toMatch(/s3cr|hunter2|ter2/);
    }
  });

  it('reads METRICS_TOKEN (32 characters at least) and SMTP_ALLOW_PLAINTEXT_AUTH', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'm'.repeat(32) }).metricsToken).toBe('m'.repeat(32));
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(
      /METRICS_TOKEN must be at least 32 characters/,
    );
    expect(loadConfig({}).smtpAllowPlaintextAuth).toBe(false);
    expect(loadConfig({ SMTP_ALLOW_PLAINTEXT_AUTH: '1' }).smtpAllowPlaintextAuth).toBe(true);
    expect(() => loadConfig({ SMTP_ALLOW_PLAINTEXT_AUTH: 'maybe' })).toThrow(
      /SMTP_ALLOW_PLAINTEXT_AUTH must be 1 or 0/,
    );
    // credentials with ignoreTLS would travel in the clear: refused, the password masked
    expect(() =>
      loadConfig({ SMTP_URL: 'smtp://u:hunter2@mail.example.test?ignoreTLS=true' }),
    ).toThrow(/SMTP_URL has credentials and ignoreTLS=true: .*smtp:\/\/u:\*\*\*@mail/);
    expect(
      loadConfig({
        SMTP_URL: 'smtp://u:p@localhost:1025?ignoreTLS=true',
        SMTP_ALLOW_PLAINTEXT_AUTH: '1',
      }).smtpUrl,
    ).toBe('smtp://u:p@localhost:1025?ignoreTLS=true');
  });

  it('reads single sign-on all or nothing, never echoing the client secret', () => {
    expect(loadConfig({}).oidc).toBeUndefined();
    const sso = {
      OIDC_ISSUER_URL: 'https://id.example.test',
      OIDC_CLIENT_ID: 'stega',
      OIDC_CLIENT_SECRET: 'the-client-secret-never-shown',
      OIDC_ALLOWED_DOMAINS: 'Example.test, @support.example.test',
      STEGA_PUBLIC_URL: 'https://help.example.test',
    };
    expect(loadConfig(sso).oidc).toEqual({
      issuerUrl: 'https://id.example.test',
      clientId: 'stega',
      clientSecret: 'the-client-secret-never-shown',
      providerName: 'single sign-on',
      allowedDomains: ['example.test', 'support.example.test'],
      scopes: 'openid email profile',
      groupsClaim: undefined,
      groupTeams: new Map(),
    });
    const groups = loadConfig({
      ...sso,
      OIDC_PROVIDER_NAME: 'Example ID',
      OIDC_SCOPES: 'email groups',
      OIDC_GROUPS_CLAIM: 'groups',
      OIDC_GROUP_TEAMS: '{"red-team":"Red","all":["Red","Blue"]}',
    }).oidc;
    expect(groups).toMatchObject({ providerName: 'Example ID', scopes: 'openid email groups' });
    expect(groups?.groupTeams).toEqual(
      new Map([
        ['red-team', ['Red']],
        ['all', ['Red', 'Blue']],
      ]),
    );
    const refusals: [Record<string, string>, RegExp][] = [
      [{ OIDC_CLIENT_ID: 'stega' }, /OIDC_CLIENT_ID is set but OIDC_ISSUER_URL is not/],
      [{ ...sso, OIDC_CLIENT_SECRET: '' }, /OIDC_CLIENT_SECRET is required with OIDC_ISSUER_URL/],
      [{ ...sso, OIDC_ALLOWED_DOMAINS: ' ' }, /OIDC_ALLOWED_DOMAINS is required/],
      [{ ...sso, STEGA_PUBLIC_URL: '' }, /STEGA_PUBLIC_URL is required with OIDC_ISSUER_URL/],
      [
        { ...sso, OIDC_ISSUER_URL: 'http://id.example.test' },
        /OIDC_ISSUER_URL must be an https:\/\/ URL \(http:\/\/ only on a loopback host\)/,
      ],
      [
        { ...sso, OIDC_ALLOWED_DOMAINS: 'example.test, not a domain' },
        /invalid domain: "not a domain"/,
      ],
      [{ ...sso, OIDC_GROUP_TEAMS: '{"a":"Red"}' }, /OIDC_GROUP_TEAMS needs OIDC_GROUPS_CLAIM/],
      [
        { ...sso, OIDC_GROUPS_CLAIM: 'groups', OIDC_GROUP_TEAMS: '["Red"]' },
        /OIDC_GROUP_TEAMS must be a JSON object/,
      ],
      [
        { ...sso, OIDC_GROUPS_CLAIM: 'groups', OIDC_GROUP_TEAMS: '{"a":[]}' },
        /group "a" has no team name/,
      ],
    ];
    for (const [env, problem] of refusals) {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(problem);
      expect((error as Error).message).not.toContain('the-client-secret-never-shown');
    }
    expect(loadConfig({ ...sso, OIDC_ISSUER_URL: 'http://127.0.0.1:4000' }).oidc?.issuerUrl).toBe(
      'http://127.0.0.1:4000',
    );
  });

  it('gives each database role its own password; the deprecated shared one fills only the gaps', () => {
    expect(loadConfig({})).toMatchObject({
      appDatabasePasswords: {},
      sharedAppDatabasePassword: [],
    });
    expect(
      loadConfig({
        STEGA_WEB_DB_PASSWORD: 'w',
        STEGA_MAIL_DB_PASSWORD: 'm',
        STEGA_WORKER_DB_PASSWORD: 'k',
        STEGA_TICKER_DB_PASSWORD: 't',
      }),
    ).toMatchObject({
      appDatabasePasswords: { web: 'w', mail: 'm', worker: 'k', ticker: 't' },
      sharedAppDatabasePassword: [],
    });
    const partly = loadConfig({ STEGA_APP_DB_PASSWORD: 'shared', STEGA_WEB_DB_PASSWORD: 'w' });
    expect(partly.appDatabasePasswords).toEqual({
      web: 'w',
      mail: 'shared',
      worker: 'shared',
      ticker: 'shared',
    });
    expect(partly.sharedAppDatabasePassword).toEqual([
      'stega_mail',
      'stega_worker',
      'stega_ticker',
    ]);
  });
});
