import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

/**
 * "How to reach me" in a real browser against `stega start` and a real SMTP server: an
 * agent adds another email address, asks for new codes until the hour's limit says no, reads
 * the last code mailed and confirms it on the page; a malformed address is shown beside the
 * field.
 */
describe('an email contact method added and verified in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const smtp = await startSmtpSink();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    SLA_WORKERS: '1',
  });
  let browser: TestBrowser;
  let page: Page;
  let agentId = 0;

  beforeAll(async () => {
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Rita Reach',
      email: 'rita@reach.test',
    });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
    const token = await stega.api<{ token: string }>('POST', '/api/tokens', {
      name: 'Rita',
      role: 'agent',
      agent_id: agent.body.id,
    });
    expect(token.status).toBe(201);
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, { url: stega.url, token: token.body.token });
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await smtp.stop();
  });

  it('refuses a malformed address beside the field, then adds one and confirms its mailed code', async () => {
    await page.getByRole('link', { name: 'How to reach me' }).click();
    const form = page.getByRole('form', { name: 'Add a contact method' });
    await form.getByLabel('Method').selectOption('email');
    await form.getByLabel('Address').fill('rita at home');
    await form.getByRole('button', { name: 'Add and verify' }).click();
    await expect.poll(() => form.getByLabel('Address').getAttribute('aria-invalid')).toBe('true');
    expect(await form.locator('.field-error').textContent()).toContain('must be an email address');

    await form.getByLabel('Address').fill('rita.pager@elsewhere.test');
    await form.getByRole('button', { name: 'Add and verify' }).click();
    const item = page.getByRole('listitem').filter({ hasText: 'rita.pager@elsewhere.test' });
    await item.getByText('not verified').waitFor();
    const mail = await eventually(
      async () => smtp.messages.find((m) => m.to.includes('rita.pager@elsewhere.test')),
      'the code by email',
    );
    const codeOf = (m: typeof mail) =>
      /verification code is (\d{6})/.exec(m.header('subject') ?? '')?.[1] ?? '';
    const mailsTo = () => smtp.messages.filter((m) => m.to.includes('rita.pager@elsewhere.test'));
    // a new code on request, up to the address's limit (5 an hour); then the page says why not
    for (let sent = 2; sent <= 5; sent++) {
      await item.getByRole('button', { name: 'Send a new code' }).click();
      await eventually(async () => mailsTo().length === sent || undefined, `code ${sent} by email`);
    }
    await item.getByRole('button', { name: 'Send a new code' }).click();
    await page.getByText('too many verification messages to this address').waitFor();
    expect(mailsTo().length).toBe(5);
    const code = codeOf(mailsTo().at(-1) ?? mail);
    expect(code).toMatch(/^\d{6}$/);
    await item.getByLabel('Code for rita.pager@elsewhere.test').fill(code);
    await item.getByRole('button', { name: 'Verify' }).click();
    await item.getByText('verified', { exact: true }).waitFor();
  });

  it('says a wrong code beside its method, and saves the rules again and again, refusing a delay that is no number', async () => {
    const form = page.getByRole('form', { name: 'Add a contact method' });
    await form.getByLabel('Method').selectOption('email');
    await form.getByLabel('Address').fill('rita.second@elsewhere.test');
    await form.getByRole('button', { name: 'Add and verify' }).click();
    const item = page.getByRole('listitem').filter({ hasText: 'rita.second@elsewhere.test' });
    await item.getByLabel('Code for rita.second@elsewhere.test').fill('000000');
    await item.getByRole('button', { name: 'Verify' }).click();
    await item.getByRole('alert').filter({ hasText: 'Code:' }).waitFor();
    expect(await form.locator('.field-error').count()).toBe(0);

    const rules = page.getByRole('form', { name: 'Notification rules' });
    const high = rules.getByRole('group', { name: /High urgency/ });
    await high.getByRole('button', { name: 'Add a step' }).click();
    await high.getByLabel('Step 1').selectOption('email');
    for (const round of [1, 2]) {
      await rules.getByRole('button', { name: 'Save rules' }).click();
      await rules.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect(await rules.locator('.error-summary').count(), `save ${round}`).toBe(0);
    }
    await high.getByLabel('after (minutes)').fill('soon');
    await rules.getByRole('button', { name: 'Save rules' }).click();
    await rules.locator('.error-summary').waitFor();
    expect(await rules.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(0);
    await expect
      .poll(() => high.getByLabel('after (minutes)').getAttribute('aria-invalid'))
      .toBe('true');
    const stored = await stega.api<{ high: { delay_minutes: number }[] }>(
      'GET',
      `/api/agents/${agentId}/notification-rules`,
    );
    expect(stored.body.high).toEqual([{ method: 'email', delay_minutes: 0 }]);
  });
});
