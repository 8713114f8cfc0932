import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { OidcConfig } from '../config.js';
import { oidcSignInDeleteExpired, oidcSignInInsert, oidcSignInTake } from '../db/oidc-sign-ins.js';
import { inTransaction } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { ServiceContext } from './context.js';
import { SingleSignOnRefusedError } from './errors.js';
import { type SignInSettings, type StartedSession, startSession } from './sign-in.js';
import { type Claims, singleSignOnAgent } from './single-sign-on-accounts.js';
import { tokenHash } from './tokens.js';

/**
 * Single sign-on with an OpenID Connect provider: the authorization code flow with PKCE,
 * `state` and `nonce` (openid-client checks each, and the ID token's signature, issuer,
 * audience and times). It ends in the same server-side session as a password sign-in, and
 * asks for no TOTP code: the provider does the second factor.
 *
 * `begin` records the request (state, nonce, PKCE verifier) under the SHA-256 of a random
 * secret that the browser keeps in a cookie, and sends the browser to the provider. `finish`
 * takes that record back with the cookie's secret — once, within SIGN_IN_MINUTES, and only
 * in the browser that began — and has openid-client redeem the code and check the answer.
 * The client secret goes to the provider's token endpoint only.
 */
export interface SingleSignOn {
  /** The provider as the sign-in page names it. */
  readonly providerName: string;
  begin(ctx: ServiceContext, returnTo: string): Promise<SingleSignOnStart>;
  /**
   * @param browserSecret the cookie's secret, if the browser sent it
   * @param callbackQuery the query string of the provider's redirect, without `?`
   * @param replacing the browser's current session secret, which the new session replaces
   * @throws SingleSignOnRefusedError with the reason to show
   */
  finish(
    ctx: ServiceContext,
    browserSecret: string | undefined,
    callbackQuery: string,
    replacing: string | undefined,
  ): Promise<{ session: StartedSession; returnTo: string }>;
}

export interface SingleSignOnStart {
  /** For the cookie that binds the answer to this browser. */
  browserSecret: string;
  /** The provider's authorization endpoint with this request's parameters. */
  redirectTo: string;
  expiresAt: Date;
}

/** How long a person has at the provider before the sign-in must start again. */
export const SIGN_IN_MINUTES = 10;
/** Seconds any one call to the provider may take. */
const PROVIDER_TIMEOUT_SECONDS = 10;

/** Where to go after signing in when the browser named nowhere (or somewhere not allowed). */
export const DEFAULT_RETURN_TO = '/tickets';

/**
 * A page of this site to go back to: a path starting with one `/`, outside `/api/`, without
 * spaces, backslashes or control characters (a `//host` or `/\host` path would leave the
 * site); anything else gives DEFAULT_RETURN_TO.
 */
export function safeReturnTo(value: string | undefined): string {
  if (
    value === undefined ||
    value.length > 500 ||
    !/^\/(?![/\\])[^\s\\\p{Cc}]*$/u.test(value) ||
    /^\/api(\/|$)/.test(value)
  ) {
    return DEFAULT_RETURN_TO;
  }
  return value;
}

export function createSingleSignOn(
  config: OidcConfig,
  settings: SignInSettings,
  logger: Logger,
): SingleSignOn {
  const redirectUri = `${settings.publicUrl}/api/auth/oidc/callback`;
  const insecure = new URL(config.issuerUrl).protocol === 'http:';
  // discovered at the first sign-in, then kept; a failure is not kept (the next one retries)
  let discovered: Promise<oidc.Configuration> | undefined;
  const provider = () => {
    discovered ??= oidc
      .discovery(
        new URL(config.issuerUrl),
        config.clientId,
        undefined,
        oidc.ClientSecretBasic(config.clientSecret),
        {
          timeout: PROVIDER_TIMEOUT_SECONDS,
          ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      )
      .catch((error: unknown) => {
        discovered = undefined;
        throw error;
      });
    return discovered;
  };
  const rules = {
    issuer: config.issuerUrl,
    allowedDomains: config.allowedDomains,
    groupsClaim: config.groupsClaim,
    groupTeams: config.groupTeams,
  };

  return {
    providerName: config.providerName,

    async begin(ctx, returnTo) {
      const configuration = await provider();
      const now = ctx.now();
      const browserSecret = randomBytes(32).toString('base64url');
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const expiresAt = new Date(now.getTime() + SIGN_IN_MINUTES * 60_000);
      await inTransaction(ctx.pool, async (tx) => {
        await oidcSignInDeleteExpired(tx, now);
        await oidcSignInInsert(
          tx,
          {
            browser_sha256: tokenHash(browserSecret),
            state,
            nonce,
            code_verifier: codeVerifier,
            return_to: safeReturnTo(returnTo),
            expires_at: expiresAt,
          },
          now,
        );
      });
      const redirectTo = oidc.buildAuthorizationUrl(configuration, {
        redirect_uri: redirectUri,
        scope: config.scopes,
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      });
      return { browserSecret, redirectTo: redirectTo.href, expiresAt };
    },

    async finish(ctx, browserSecret, callbackQuery, replacing) {
      const pending = browserSecret
        ? await oidcSignInTake(ctx.pool, tokenHash(browserSecret), ctx.now())
        : undefined;
      if (!pending) {
        throw new SingleSignOnRefusedError(
          'expired',
          'no sign-in of this browser is under way (expired, answered already, or begun in another browser)',
        );
      }
      const answer = new URLSearchParams(callbackQuery);
      const providerError = answer.get('error');
      if (providerError !== null) {
        // the state still has to be this sign-in's, or anyone could end it
        if (answer.get('state') !== pending.state) {
          throw new SingleSignOnRefusedError('failed', 'the answer is not of this sign-in');
        }
        throw new SingleSignOnRefusedError(
          'cancelled',
          `the provider answered ${providerError.slice(0, 100)}`,
        );
      }
      let claims: Claims;
      try {
        const configuration = await provider();
        const tokens = await oidc.authorizationCodeGrant(
          configuration,
          new URL(`${redirectUri}?${callbackQuery}`),
          {
            pkceCodeVerifier: pending.code_verifier,
            expectedState: pending.state,
            expectedNonce: pending.nonce,
            idTokenExpected: true,
          },
        );
        const idClaims = tokens.claims();
        if (!idClaims) throw new Error('the token answer has no ID token');
        claims = { ...idClaims };
        if (configuration.serverMetadata().userinfo_endpoint) {
          const userinfo = await oidc.fetchUserInfo(
            configuration,
            tokens.access_token,
            idClaims.sub,
          );
          claims = { ...userinfo, ...claimsWithValues(idClaims) };
        }
      } catch (error) {
        throw new SingleSignOnRefusedError('failed', describe(error), { cause: error });
      }
      const agentId = await singleSignOnAgent(ctx, rules, claims, logger);
      const session = await startSession(ctx, settings, agentId, replacing);
      return { session, returnTo: pending.return_to };
    },
  };
}

/** The ID token's claims that carry a value (userinfo fills in the others). */
function claimsWithValues(claims: Claims): Claims {
  return Object.fromEntries(
    Object.entries(claims).filter(([, value]) => value !== undefined && value !== null),
  );
}

/** What went wrong, for the log: openid-client's code and message, never a token. */
function describe(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  return typeof code === 'string' ? `${code}: ${text}` : text;
}
