import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/** A person the test provider knows: their login (the email) and password, and their claims. */
export interface ProviderUser {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  password: string;
  groups?: string[];
}

export interface TestOidcProvider {
  /** The issuer (http://127.0.0.1:port), for OIDC_ISSUER_URL. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Adds a person, or changes one (by sub). */
  setUser(user: ProviderUser): void;
  /**
   * Signs in at the provider as a browser would, from the authorization URL Stega redirected
   * to: follows redirects (keeping the provider's cookies), fills its login form, and returns
   * the URL the provider sends the browser back to (Stega's callback, with code and state).
   * Each call is a new browser.
   */
  signIn(authorizationUrl: string, credentials: { email: string; password: string }): Promise<URL>;
  stop(): Promise<void>;
}

/** The login form's page title, for browser tests. */
export const PROVIDER_LOGIN_HEADING = 'Test identity provider: sign in';

/**
 * A real OpenID provider (npm's oidc-provider) on 127.0.0.1 for tests: discovery, JWKS,
 * authorization with PKCE, token and userinfo endpoints, one confidential client
 * (client_secret_basic) allowed to redirect to `redirectUris`, and a login form of its own
 * that checks the people's passwords. Consent is given at once (a first-party client). The
 * claims: `sub`; `email` and `email_verified` (scope email); `name` (profile); `groups`
 * (scope groups). As the provider is configured by default, scope claims come from the
 * userinfo endpoint, not the ID token.
 */
export async function startOidcProvider(options: {
  redirectUris: string[];
}): Promise<TestOidcProvider> {
  const users = new Map<string, ProviderUser>();
  const clientId = 'stega-test-client';
  const clientSecret = randomBytes(24).toString('base64url');
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    format: 'jwk',
  });

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...key, kid: 'test-key', use: 'sig', alg: 'RS256' }] as never },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    features: { devInteractions: { enabled: false } },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 3600,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const user = [...users.values()].find((u) => u.sub === sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            email: user.email,
            email_verified: user.email_verified,
            name: user.name,
            ...(user.groups ? { groups: user.groups } : {}),
          };
        },
      };
    },
    // a first-party client: what it asks for is granted without a consent page
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const client = ctx.oidc.client;
      const session = ctx.oidc.session;
      if (!client || !session?.accountId) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: client.clientId,
        accountId: session.accountId,
      });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  const providerCallback = provider.callback();

  const loginPage = (uid: string, error?: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${PROVIDER_LOGIN_HEADING}</title></head>
<body><main><h1>${PROVIDER_LOGIN_HEADING}</h1>
${error ? `<p role="alert">${error}</p>` : ''}
<form method="post" action="/interaction/${uid}/login">
<label>Email <input name="email" type="email" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Continue</button>
</form></main></body></html>`;

  const interaction = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const [, , uid = '', action] = (req.url ?? '').split('?')[0]?.split('/') ?? [];
    await provider.interactionDetails(req, res);
    if (req.method === 'GET' && action === undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(loginPage(uid));
      return;
    }
    if (req.method === 'POST' && action === 'login') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const user = users.get((form.get('email') ?? '').toLowerCase());
      if (!user || user.password !== form.get('password')) {
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(loginPage(uid, 'Wrong email or password.'));
        return;
      }
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: user.sub } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    res.writeHead(404).end();
  };

  server.on('request', (req, res) => {
    if ((req.url ?? '').startsWith('/interaction/')) {
      interaction(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`interaction failed: ${(error as Error).message}`);
      });
    } else providerCallback(req, res);
  });

  return {
    issuer,
    clientId,
    clientSecret,
    setUser(user) {
      for (const [login, known] of users) if (known.sub === user.sub) users.delete(login);
      users.set(user.email.toLowerCase(), user);
    },
    async signIn(authorizationUrl, credentials) {
      const cookies = new Map<string, string>();
      const request = async (url: string, init: RequestInit = {}) => {
        const response = await fetch(url, {
          ...init,
          redirect: 'manual',
          headers: {
            ...(init.headers as Record<string, string> | undefined),
            cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
          },
        });
        for (const line of response.headers.getSetCookie()) {
          const [pair = ''] = line.split(';');
          const at = pair.indexOf('=');
          cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
        }
        return response;
      };
      let url = authorizationUrl;
      for (let hop = 0; hop < 20; hop++) {
        if (!url.startsWith(issuer)) return new URL(url);
        let response = await request(url);
        if (response.status === 200 && new URL(url).pathname.startsWith('/interaction/')) {
          const action = /<form method="post" action="([^"]+)"/.exec(await response.text())?.[1];
          if (!action) throw new Error('the provider showed no login form');
          response = await request(new URL(action, issuer).href, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(credentials).toString(),
          });
          if (response.status === 200) throw new Error('the provider refused the credentials');
        }
        const location = response.headers.get('location');
        if (!location) {
          throw new Error(
            `the provider answered ${response.status} at ${url}: ${await response.text()}`,
          );
        }
        url = new URL(location, url).href;
      }
      throw new Error('the provider redirected too often');
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
