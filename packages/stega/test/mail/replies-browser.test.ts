import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from '../ui/browser.js';
import { rawMail } from './intake-scene.js';
import { customerMailer, filedTicket } from './mail-to-stega.js';
import { startScriptedSmtp } from './scripted-smtp.js';

/**
 * Replies out as an agent sees them, with `stega start` and a real browser: a reply typed in
 * the ticket page that the customer's server refuses says so in words, with the reason, and
 * goes out when sent again; the customer's answer shows with the quoted reply folded.
 */
describe('replies out in the browser', async () => {
  ensureWebBuilt();
  const smtp = await startScriptedSmtp();
  const db = await createTestDatabase({ template: 'stega' });
  const smtpPort = await freePort();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SLA_WORKERS: '0',
    INBOUND_SMTP_PORT: String(smtpPort),
    SMTP_URL: smtp.url,
  });
  let browser: TestBrowser;
  let page: Page;
  let ticketId: number;
  const send = customerMailer(smtpPort);
  const filed = (messageKey: string) => filedTicket(db.pool, messageKey);

  beforeAll(async () => {
    expect(
      (await stega.api('POST', '/api/agents', { name: 'Ana Sousa', email: 'ana@acme.test' }))
        .status,
    ).toBe(201);
    const mailbox = await stega.api('POST', '/api/mailboxes', {
      address: 'support@acme.test',
      display_name: 'Acme Support',
    });
    expect(mailbox.status).toBe(201);
    // the customer's server refuses their address for now
    smtp.refuseRecipient('rui@customer.test', 550, '5.1.1 <rui@customer.test>: user unknown');
    await send(rawMail({ messageId: 'browser-1@customer.test' }));
    ticketId = await filed('browser-1@customer.test');
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await smtp.stop();
  });

  it('says in words that a refused reply was not delivered and why, and sends it again on request', async () => {
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    // the acknowledgement was refused too, under the request
    await page
      .getByText(/“We got your request” email not delivered to rui@customer\.test: .*550/)
      .waitFor();
    // a ticket of a mailbox: nothing says its replies stay unsent
    expect(await page.getByTestId('not-emailed').count()).toBe(0);
    await page.getByLabel('Reply as').selectOption({ label: 'Ana Sousa' });
    await page.getByLabel('Add a comment').fill('We reset your VPN profile.');
    await page.getByRole('button', { name: 'Add comment' }).click();
    const reply = page.locator('li', { hasText: 'We reset your VPN profile.' });
    await reply
      .getByText(/^Reply not delivered to rui@customer\.test: .*550.*user unknown/)
      .waitFor();
    await browser.screenshot('reply-not-delivered');

    smtp.acceptRecipient('rui@customer.test');
    await reply.getByRole('button', { name: 'Send again' }).click();
    await reply.getByText(/^Reply emailed to rui@customer\.test · /).waitFor();
    const sent = smtp.accepted.filter((m) => m.parsed.text?.includes('We reset your VPN profile.'));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.parsed.from?.value[0]).toEqual({
      name: 'Ana Sousa at Acme Support',
      address: 'support@acme.test',
    });
  });

  it('shows the customer’s answer with the quoted reply folded', async () => {
    const [sent] = smtp.accepted.filter((m) => m.parsed.text?.includes('We reset'));
    await send(
      rawMail({
        messageId: 'browser-2@customer.test',
        subject: 'Re: VPN is down',
        headers: [`In-Reply-To: ${sent?.parsed.messageId}`],
        body: [
          'Works now, thanks.',
          '',
          'On Mon, 2 Mar 2026 at 10:02, Ana Sousa at Acme Support <support@acme.test> wrote:',
          '> We reset your VPN profile.',
        ].join('\r\n'),
      }),
    );
    expect(await filed('browser-2@customer.test')).toBe(ticketId);
    const answer = page.locator('li', { hasText: 'Works now, thanks.' });
    await answer.waitFor();
    const quoted = answer.getByText('> We reset your VPN profile.');
    expect(await quoted.isVisible()).toBe(false);
    await answer.getByText('Show the quoted text').click();
    await quoted.waitFor();
    await browser.screenshot('reply-answer-quoted');
  });
});
