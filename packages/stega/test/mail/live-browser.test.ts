import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { agentSetPassword } from '../../src/db/agents.js';
import { passwordHash } from '../../src/services/passwords.js';
import { startStega } from '../e2e/stega-process.js';
import {
  ensureWebBuilt,
  launchBrowser,
  signInWithPassword,
  type TestBrowser,
} from '../ui/browser.js';
import { rawMail } from './intake-scene.js';
import { customerMailer, filedTicket } from './mail-to-stega.js';

/**
 * Live updates as an agent sees them, with `stega start` and a real browser: the ticket page is
 * open, the customer answers by email, and their comment appears on the page without a
 * reload. While the live stream is open the page polls only every 30 s: the comment shows
 * well before that because the stream told the page (GET /api/live).
 */
describe('new customer mail appears live on the open ticket', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const smtpPort = await freePort();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SLA_WORKERS: '0',
    INBOUND_SMTP_PORT: String(smtpPort),
  });
  const PASSWORD = 'a long enough password';
  let browser: TestBrowser;
  let page: Page;
  let ticketId: number;
  const send = customerMailer(smtpPort);
  const filed = (messageKey: string) => filedTicket(db.pool, messageKey);

  beforeAll(async () => {
    const team = await stega.api('POST', '/api/teams', { name: 'Support' });
    expect(team.status).toBe(201);
    const ana = await stega.api('POST', '/api/agents', {
      name: 'Ana Sousa',
      email: 'ana@acme.test',
      role: 'agent',
    });
    expect(ana.status).toBe(201);
    const anaId = (ana.body as { id: number }).id;
    const teamId = (team.body as { id: number }).id;
    expect(
      (await stega.api('PUT', `/api/teams/${teamId}/members/${anaId}`, {})).status,
    ).toBeLessThan(300);
    await agentSetPassword(db.pool, anaId, await passwordHash(PASSWORD), new Date());
    const mailbox = await stega.api('POST', '/api/mailboxes', {
      address: 'support@acme.test',
      display_name: 'Acme Support',
      team_id: teamId,
    });
    expect(mailbox.status).toBe(201);
    await send(rawMail({ messageId: 'live-browser-1@customer.test', subject: 'Printer jams' }));
    ticketId = await filed('live-browser-1@customer.test');
    browser = await launchBrowser();
    page = browser.page;
    await signInWithPassword(page, stega.url, { email: 'ana@acme.test', password: PASSWORD });
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
  });

  it('shows the customer’s emailed answer on the open ticket page without a reload', async () => {
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    await page.getByRole('heading', { name: /Printer jams/, level: 1 }).waitFor();
    // the live stream is open: from here the page polls only every 30 s
    await page.getByText('Live', { exact: true }).waitFor();
    const loads: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) loads.push(frame.url());
    });
    await send(
      rawMail({
        messageId: 'live-browser-2@customer.test',
        subject: 'Re: Printer jams',
        headers: ['In-Reply-To: <live-browser-1@customer.test>'],
        body: 'It jams again on tray two.',
      }),
    );
    expect(await filed('live-browser-2@customer.test')).toBe(ticketId);
    // well under the 30-s poll: only the live event can have brought it
    await page.getByText('It jams again on tray two.').waitFor({ timeout: 20_000 });
    expect(loads).toEqual([]);
    await browser.screenshot('live-ticket-new-mail');
  });
});
