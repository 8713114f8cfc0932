import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import {
  PROVIDER_LOGIN_HEADING,
  startOidcProvider,
} from '../../../../test-support/oidc-provider.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, type TestBrowser } from './browser.js';

/**
 * Single sign-on in Chromium against `stega web` and a real OpenID provider (npm's
 * oidc-provider, with its own login form): a ticket link opened signed out shows "Sign in
 * with Acme ID"; the provider's form signs in; Stega makes the agent, puts them in the team
 * of their group, and opens the ticket the link named. A refused person (an address the
 * provider has not verified) lands on the sign-in page with the reason.
 */
describe('signing in with single sign-on in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const provider = await startOidcProvider({
    redirectUris: [`${publicUrl}/api/auth/oidc/callback`],
  });
  const stega = await startStega(['web'], {
    DATABASE_URL: db.url,
    PORT: String(port),
    STEGA_PUBLIC_URL: publicUrl,
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_PROVIDER_NAME: 'Acme ID',
    OIDC_ALLOWED_DOMAINS: 'acme.test',
    OIDC_SCOPES: 'openid email profile groups',
    OIDC_GROUPS_CLAIM: 'groups',
    OIDC_GROUP_TEAMS: '{"support-red":"Red"}',
  });
  let browser: TestBrowser;
  let page: Page;
  let ticketId = 0;

  const ok = async <T>(method: string, route: string, body?: unknown) => {
    const answer = await stega.api<T & { id: number }>(method, route, body);
    expect(answer.status, `${method} ${route} ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };
  /** From Stega's sign-in page through the provider's login form. */
  const signInAtProvider = async (email: string, password: string) => {
    await page.getByRole('link', { name: 'Sign in with Acme ID' }).click();
    await page.getByRole('heading', { name: PROVIDER_LOGIN_HEADING }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Continue' }).click();
  };

  beforeAll(async () => {
    const red = await ok('POST', '/api/teams', { name: 'Red' });
    ticketId = (
      await ok('POST', '/api/tickets', {
        subject: 'Red printer jammed',
        requester_name: 'Carol',
        requester_email: 'carol@customer.test',
        team_id: red.id,
      })
    ).id;
    provider.setUser({
      sub: 'acme-ines',
      email: 'ines@acme.test',
      email_verified: true,
      name: 'Ines Iglesias',
      password: 'at the provider',
      groups: ['support-red'],
    });
    provider.setUser({
      sub: 'acme-uwe',
      email: 'uwe@acme.test',
      email_verified: false,
      name: 'Uwe Unverified',
      password: 'at the provider',
    });
    browser = await launchBrowser();
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await provider.stop();
  });

  it('signs in through the provider’s form, making the agent, and opens the ticket the link named', async () => {
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    await page.getByRole('heading', { name: 'Sign in to Stega' }).waitFor();
    await browser.screenshot('sso-01-sign-in-page');
    await signInAtProvider('ines@acme.test', 'at the provider');
    // a member of Red by her group, so the team's ticket is hers to see
    await page.getByRole('heading', { name: /Red printer jammed/ }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/tickets/${ticketId}`);
    expect(await page.getByRole('link', { name: /Ines Iglesias/ }).count()).toBe(1);
    // the same HttpOnly session cookie as a password sign-in
    expect(await page.evaluate('document.cookie')).toBe('');
    const session = await page.evaluate(async () => (await fetch('/api/session')).json());
    expect(session).toMatchObject({ name: 'Ines Iglesias', role: 'agent', via: 'session' });
    await browser.screenshot('sso-02-signed-in-at-the-ticket');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Stega' }).waitFor();
  });

  it('brings a refused person back to the sign-in page with the reason', async () => {
    // another person at this browser: the provider's session of Ines is forgotten (the
    // provider and Stega share the host 127.0.0.1, so their cookies go together)
    await browser.context.clearCookies();
    await page.goto(`${stega.url}/tickets`);
    await signInAtProvider('uwe@acme.test', 'at the provider');
    await page
      .getByRole('alert')
      .getByText('Acme ID has not verified your email address')
      .waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(new URL(page.url()).search).toBe('');
    expect(await page.evaluate(async () => (await fetch('/api/session')).status)).toBe(401);
    await browser.screenshot('sso-03-refused');
    const agents = await ok<{ items: { email: string }[] }>(
      'GET',
      '/api/agents?include_deactivated=true',
    );
    expect(agents.items.map((a) => a.email)).toEqual(['ines@acme.test']);
    expect(browser.problems.filter((p) => !/status of 40[14]/.test(p))).toEqual([]);
  });
});
