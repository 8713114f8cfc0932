import nodemailer from 'nodemailer';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from '../ui/browser.js';

/**
 * An HTML mail with a script, event handlers and a remote image, received by `stega start`
 * over SMTP and opened on its ticket in a real browser: nothing of it runs, and the remote
 * image is not fetched until the reader asks for it.
 */
describe('received HTML in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const smtpPort = await freePort();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SLA_WORKERS: '0',
    INBOUND_SMTP_PORT: String(smtpPort),
  });
  let browser: TestBrowser;
  let page: Page;
  const tracker: string[] = [];
  const ran: string[] = [];
  let ticketId: number;

  beforeAll(async () => {
    const mailbox = await stega.api('POST', '/api/mailboxes', {
      address: 'support@acme.test',
      display_name: 'Acme Support',
    });
    expect(mailbox.status).toBe(201);
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: smtpPort,
      ignoreTLS: true,
    });
    await transport.sendMail({
      from: 'Rui Costa <rui@customer.test>',
      to: 'support@acme.test',
      subject: 'Formatted',
      messageId: '<browser@customer.test>',
      text: 'Hello team',
      html: [
        '<p>Hello <b>team</b></p>',
        '<script>parent.postMessage("script ran", "*")</script>',
        '<img src="x" onerror="parent.postMessage(\'onerror ran\', \'*\')">',
        "<p onmouseover=\"parent.postMessage('handler ran', '*')\">hover</p>",
        '<img src="http://tracker.example.test/open.gif" alt="tracker">',
      ].join(''),
    });
    transport.close();
    const { rows } = await eventually(async () => {
      const result = await db.pool.query(
        `select ticket_id from stega.inbound_mail where message_key = 'browser@customer.test' and state = 'filed'`,
      );
      return result.rowCount ? result : undefined;
    }, 'the message filed');
    ticketId = Number(rows[0].ticket_id);
    // the message's frame in the page's process: see BrowserOptions.siteIsolation
    browser = await launchBrowser({ siteIsolation: false });
    page = browser.page;
    // every request of the page and its frames, answered or not
    browser.context.on('request', (request) => {
      if (request.url().includes('tracker.example.test')) tracker.push(request.url());
    });
    await browser.context.route('http://tracker.example.test/**', (route) =>
      route.fulfill({ status: 200, contentType: 'image/gif', body: Buffer.alloc(0) }),
    );
    await page.exposeFunction('reportRan', (what: string) => ran.push(what));
    await page.addInitScript({
      content:
        "window.addEventListener('message', (event) => window.reportRan(String(event.data)));",
    });
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
  });

  it('shows the sanitized message; no script or handler runs, no remote image loads until asked', async () => {
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    const message = page.getByRole('article', { name: /^Message / });
    await message.getByRole('button', { name: 'Show the formatted message' }).click();
    const frame = page.frameLocator('iframe[title^="Formatted message"]');
    await expect.poll(() => frame.locator('b').textContent()).toBe('team');
    // the handler's event, dispatched on the paragraph, then a real pointer over it
    const paragraph = frame.getByText('hover');
    await paragraph.dispatchEvent('mouseover');
    await page.locator('iframe[title^="Formatted message"]').scrollIntoViewIfNeeded();
    const box = await eventually(() => paragraph.boundingBox(), 'the paragraph laid out');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.move(box.x + 2, box.y + 2);
    expect(await frame.locator('[onmouseover], [onerror]').count()).toBe(0);
    expect(await frame.locator('script').count()).toBe(0);
    await page.getByText('1 remote image(s) not loaded').waitFor();
    expect(tracker).toEqual([]);
    expect(ran).toEqual([]);
    await browser.screenshot('mail-html-sanitized');

    await page.getByRole('button', { name: 'Load remote images' }).click();
    await expect.poll(() => tracker.length).toBeGreaterThan(0);
    expect(tracker[0]).toBe('http://tracker.example.test/open.gif');
    expect(ran).toEqual([]);
  });

  it('lists a message that could not be filed on the operations page, where an admin discards it', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: smtpPort,
      ignoreTLS: true,
    });
    await transport.sendMail({
      envelope: { from: '', to: ['support@acme.test'] },
      raw: 'To: support@acme.test\r\nSubject: who sent this\r\nMessage-ID: <nobody@nowhere.test>\r\n\r\nanonymous\r\n',
    });
    transport.close();
    await page.goto(`${stega.url}/operations`);
    const row = page.locator('#main tr', { hasText: 'who sent this' });
    await row.waitFor();
    expect(await row.textContent()).toContain('no sender');
    await row.getByRole('button', { name: 'Discard' }).click();
    await page.getByText(/Message \d+ discarded\./).waitFor();
    await expect.poll(() => row.count()).toBe(0);
    const { rows } = await db.pool.query(
      `select state from stega.inbound_mail where message_key = 'nobody@nowhere.test'`,
    );
    expect(rows[0].state).toBe('discarded');
  });
});
