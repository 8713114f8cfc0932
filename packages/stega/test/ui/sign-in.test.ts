import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { startStega } from '../e2e/stega-process.js';
import { mailBodyOf } from '../support/fixtures.js';
import {
  ensureWebBuilt,
  launchBrowser,
  signIn,
  signInWithPassword,
  type TestBrowser,
} from './browser.js';

/**
 * Signing in as a person, in Chromium against `stega web` with a real SMTP server: the
 * invitation link sets a password, a password signs in, a ticket link opened in a second tab
 * needs no second sign-in, signing out ends both tabs, an agent of another team finds the
 * other team's ticket "not found", a deactivated agent's session and token stop at the
 * next request, and a second factor set up from the account page is asked for at sign-in.
 */
describe('signing in with a password in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const smtp = await startSmtpSink();
  const stega = await startStega(['web'], { DATABASE_URL: db.url, SMTP_URL: smtp.url });
  let browser: TestBrowser;
  let page: Page;
  const PASSWORD = 'a long enough password';
  const ids = { red: 0, blue: 0, rita: 0, bruno: 0, redTicket: 0, blueTicket: 0 };
  const ritaEmail = 'rita@red.test';
  const brunoEmail = 'bruno@blue.test';

  const ok = async <T>(method: string, route: string, body?: unknown) => {
    const answer = await stega.api<T & { id: number }>(method, route, body);
    expect(answer.status, `${method} ${route} ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };
  /** The invitation link of the last mail to `to`, on the address the test reaches Stega at. */
  const invitationLink = async (to: string) => {
    let token: string | undefined;
    await eventually(
      async () => {
        const mail = smtp.messages.findLast((m) => m.to.includes(to));
        token = mail ? /#invitation=([A-Za-z0-9_-]+)/.exec(mailBodyOf(mail.raw))?.[1] : undefined;
        return token !== undefined;
      },
      `the invitation mail to ${to}`,
      PROCESS_PATIENCE,
    );
    return `${stega.url}/set-password#invitation=${token}`;
  };
  const acceptInvitation = async (target: Page, to: string) => {
    await target.goto(await invitationLink(to));
    await target.getByRole('heading', { name: 'Welcome to Stega' }).waitFor();
    // the secret left the address bar at once
    expect(target.url()).not.toContain('#invitation=');
    await target.getByLabel('New password').fill(PASSWORD);
    await target.getByLabel('The same password again').fill(PASSWORD);
    await target.getByRole('button', { name: 'Set password and sign in' }).click();
    await target.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
  };
  const signOut = async (target: Page) => {
    await target.getByRole('button', { name: 'Sign out' }).click();
    await target.getByRole('heading', { name: 'Sign in to Stega' }).waitFor();
  };
  const sessionStatus = (target: Page) =>
    target.evaluate(async () => (await fetch('/api/session')).status);

  beforeAll(async () => {
    ids.red = (await ok('POST', '/api/teams', { name: 'Red' })).id;
    ids.blue = (await ok('POST', '/api/teams', { name: 'Blue' })).id;
    ids.rita = (await ok('POST', '/api/agents', { name: 'Rita Red', email: ritaEmail })).id;
    ids.bruno = (await ok('POST', '/api/agents', { name: 'Bruno Blue', email: brunoEmail })).id;
    await ok('PUT', `/api/teams/${ids.red}/members/${ids.rita}`, {});
    await ok('PUT', `/api/teams/${ids.blue}/members/${ids.bruno}`, {});
    const ticket = async (subject: string, team: number) =>
      (
        await ok('POST', '/api/tickets', {
          subject,
          requester_name: 'Carol',
          requester_email: 'carol@customer.test',
          team_id: team,
        })
      ).id;
    ids.redTicket = await ticket('Red printer jammed', ids.red);
    ids.blueTicket = await ticket('Blue invoice missing', ids.blue);
    browser = await launchBrowser();
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await smtp.stop();
  });

  it('sets a password from the emailed invitation, and signs in with it', async () => {
    await ok('POST', `/api/agents/${ids.rita}/invitation`);
    await acceptInvitation(page, ritaEmail);
    await browser.screenshot('sign-in-01-invited');
    await signOut(page);
    expect(await sessionStatus(page)).toBe(401);

    await signInWithPassword(page, stega.url, { email: ritaEmail, password: 'not the password' });
    // hashing takes its time: wait for the answer, not a fixed while
    await page.getByText('the email or the password is wrong').waitFor();
    expect(await page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    await browser.screenshot('sign-in-02-wrong-password');
    await signInWithPassword(page, stega.url, { email: ritaEmail, password: PASSWORD });
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
    expect(await page.getByRole('link', { name: /Rita Red/ }).count()).toBe(1);
    // the session is an HttpOnly cookie: no script sees it, no token is kept in the tab
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.evaluate("sessionStorage.getItem('stega.token')")).toBeNull();
  });

  it('opens a ticket link in a second tab without signing in again', async () => {
    const second = await browser.context.newPage();
    try {
      await second.goto(`${stega.url}/tickets/${ids.redTicket}`);
      await second.getByRole('heading', { name: /Red printer jammed/ }).waitFor();
      expect(await second.getByRole('heading', { name: 'Sign in to Stega' }).count()).toBe(0);
      await browser.screenshot('sign-in-03-second-tab', second);
    } finally {
      await second.close();
    }
  });

  it('answers "not found" for a ticket link of another team', async () => {
    await page.goto(`${stega.url}/tickets/${ids.blueTicket}`);
    await page.getByText(`ticket ${ids.blueTicket} not found`).waitFor();
    expect(await page.getByText('Blue invoice missing').count()).toBe(0);
    await browser.screenshot('sign-in-04-other-team-not-found');
  });

  it('signs both tabs out at once', async () => {
    await page.goto(`${stega.url}/tickets`);
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
    const second = await browser.context.newPage();
    try {
      await second.goto(`${stega.url}/tickets/${ids.redTicket}`);
      await second.getByRole('heading', { name: /Red printer jammed/ }).waitFor();
      await signOut(page);
      // the ticket page refreshes every 3 s: its next request is refused, and it shows sign-in
      await second.getByRole('heading', { name: 'Sign in to Stega' }).waitFor({ timeout: 20_000 });
      expect(await sessionStatus(second)).toBe(401);
      await second.reload();
      await second.getByRole('heading', { name: 'Sign in to Stega' }).waitFor();
    } finally {
      await second.close();
    }
  });

  it('stops a deactivated agent’s session and token at their next request', async () => {
    await ok('POST', `/api/agents/${ids.bruno}/invitation`);
    await acceptInvitation(page, brunoEmail);
    const token = (
      await ok<{ token: string }>('POST', '/api/tokens', {
        name: 'bruno script',
        role: 'agent',
        agent_id: ids.bruno,
      })
    ).token;
    await page.goto(`${stega.url}/tickets/${ids.blueTicket}`);
    await page.getByRole('heading', { name: /Blue invoice missing/ }).waitFor();
    const withToken = () =>
      page.evaluate(
        async (bearer) =>
          (await fetch('/api/session', { headers: { authorization: `Bearer ${bearer}` } })).status,
        token,
      );
    expect(await withToken()).toBe(200);

    await ok('POST', `/api/agents/${ids.bruno}/deactivate`);
    expect(await sessionStatus(page)).toBe(401);
    expect(await withToken()).toBe(401);
    await page.getByRole('heading', { name: 'Sign in to Stega' }).waitFor({ timeout: 20_000 });
    await browser.screenshot('sign-in-05-deactivated');
    // and the password no longer signs in
    await signInWithPassword(page, stega.url, { email: brunoEmail, password: PASSWORD });
    await page.getByText('the email or the password is wrong').waitFor();
    expect(browser.problems.filter((p) => !/status of 40[014]/.test(p))).toEqual([]);
  });

  it('reactivates the agent from the Agents page, after which the password works again', async () => {
    const admin = await browser.context.newPage();
    try {
      // the admin token signs this tab in (sessionStorage, this tab only)
      await signIn(admin, stega);
      await admin.goto(`${stega.url}/agents`);
      const row = admin.locator(`tr[data-agent-id="${ids.bruno}"]`);
      await row.getByText('(deactivated').waitFor();
      await row.getByRole('button', { name: 'Reactivate Bruno Blue' }).click();
      await row.getByRole('button', { name: 'Deactivate Bruno Blue' }).waitFor();
      await browser.screenshot('sign-in-06-reactivated', admin);
    } finally {
      await admin.close();
    }
    await signInWithPassword(page, stega.url, { email: brunoEmail, password: PASSWORD });
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
  });

  it('sets up a second factor from the account page, then asks for a code at sign-in', async () => {
    // whoever was signed in on this browser is gone: Rita's turn
    await browser.context.clearCookies();
    await signInWithPassword(page, stega.url, { email: ritaEmail, password: PASSWORD });
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
    await page.goto(`${stega.url}/account`);
    await page.getByRole('button', { name: 'Set up a second factor' }).click();
    await page.getByRole('img', { name: "QR code of your second factor's key" }).waitFor();
    const secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').replace(/\s/g, '');
    await browser.screenshot('sign-in-07-second-factor-qr');
    // the app's code now (stega web runs on the real clock; a code of the step before or
    // after is accepted too)
    const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() });
    await page.getByLabel('Code', { exact: true }).fill(code);
    await page.getByRole('button', { name: 'Confirm and turn on' }).click();
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    const recovery = await list.getByRole('listitem').allInnerTexts();
    expect(recovery).toHaveLength(10);
    await browser.screenshot('sign-in-08-recovery-codes');
    await page.getByRole('button', { name: 'I have kept them' }).click();
    await page.getByText(/Password sign-ins ask for a code\. 10 recovery codes left/).waitFor();

    await signOut(page);
    await signInWithPassword(page, stega.url, { email: ritaEmail, password: PASSWORD });
    const form = page.getByRole('form', { name: 'Sign in with email and password' });
    const codeField = form.getByLabel('Code', { exact: true });
    await codeField.waitFor();
    await browser.screenshot('sign-in-09-code-asked');
    await codeField.fill('AAAA-AAAA-AAAA-AAAA');
    await form.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('is not a current code of your authenticator app').waitFor();
    await codeField.fill(recovery[0] ?? '');
    await form.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
    await signOut(page);

    // an admin resets it from the Agents page (the admin token, in a tab of its own, as this
    // browser has no session now): the password alone signs in again
    const admin = await browser.context.newPage();
    try {
      await signIn(admin, stega);
      await admin.goto(`${stega.url}/agents`);
      const row = admin.locator(`tr[data-agent-id="${ids.rita}"]`);
      await row.getByRole('button', { name: 'Reset second factor of Rita Red' }).click();
      await row.getByText("Rita Red's second factor is reset").waitFor();
    } finally {
      await admin.close();
    }
    await signInWithPassword(page, stega.url, { email: ritaEmail, password: PASSWORD });
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
  });
});
