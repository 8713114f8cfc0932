import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';
import { calendarInsert24x7, ticketInsertWithClocks } from '../support/fixtures.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

/**
 * The WCAG contrast ratio of an element's text colour against the first opaque background
 * behind it (its own or an ancestor's).
 */
async function contrastOf(locator: Locator): Promise<number> {
  // in the page (no DOM types here): the computed colours, as CSS text
  const colours = await locator.evaluate((element: any) => {
    const style = (node: any) => node.ownerDocument.defaultView.getComputedStyle(node);
    let background = 'rgb(255, 255, 255)';
    for (let node = element; node; node = node.parentElement) {
      const colour = style(node).backgroundColor as string;
      if (colour !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(colour)) {
        background = colour;
        break;
      }
    }
    return { text: style(element).color as string, background };
  });
  const luminance = (css: string) => {
    const [r = 0, g = 0, b = 0] = (css.match(/[\d.]+/g) ?? []).map(Number);
    const linear = (c: number) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  };
  const [text, back] = [luminance(colours.text), luminance(colours.background)];
  return (Math.max(text, back) + 0.05) / (Math.min(text, back) + 0.05);
}

/** Teams and the SLA achievement report in a real browser against `stega start`. */
describe('teams and SLA achievement in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 2);
  const stega = await startStega(['start'], { DATABASE_URL: db.url, SLA_WORKERS: '1' });
  let browser: TestBrowser;
  let page: Page;
  const agents: Record<string, number> = {};

  beforeAll(async () => {
    for (const [name, email] of [
      ['Ines Lead', 'ines@example.test'],
      ['Joao Member', 'joao@example.test'],
    ] as const) {
      const agent = await stega.api<{ id: number }>('POST', '/api/agents', { name, email });
      expect(agent.status).toBe(201);
      agents[name] = agent.body.id;
    }
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await pool.end();
  });

  it('adds a team with members and a lead, and puts a ticket in it', async () => {
    await page.getByRole('link', { name: 'Teams', exact: true }).click();
    await page.getByRole('heading', { name: 'Teams', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'New team' });
    await form.getByLabel('Team name').fill('Billing');
    await form.getByLabel('Team time zone').fill('Mars/Olympus');
    await form.getByRole('checkbox', { name: 'Ines Lead' }).check();
    await form.getByRole('checkbox', { name: 'Joao Member' }).check();
    await form.getByLabel('Team lead').selectOption({ label: 'Ines Lead' });
    await form.getByRole('button', { name: 'Add team' }).click();
    // the API's 400 names the zone field
    await expect
      .poll(() => form.getByLabel('Team time zone').getAttribute('aria-invalid'))
      .toBe('true');
    await form.getByLabel('Team time zone').fill('Europe/Lisbon');
    await form.getByRole('button', { name: 'Add team' }).click();
    const card = page.getByRole('article', { name: 'Team Billing' });
    await card.waitFor();
    expect(await card.textContent()).toContain('Europe/Lisbon');
    expect(await card.locator(`[data-member-id="${agents['Ines Lead']}"]`).textContent()).toContain(
      'lead',
    );
    expect(await card.locator('li').count()).toBe(2);
    await browser.screenshot('teams-01-page');

    await page.getByRole('link', { name: 'Tickets', exact: true }).click();
    await page.getByRole('link', { name: 'New ticket' }).click();
    await page.getByLabel('Subject').fill('Refund not received');
    await page.getByLabel('Requester name').fill('Rosa');
    await page.getByLabel('Requester email').fill('rosa@example.test');
    await page.getByLabel('Team').selectOption({ label: 'Billing' });
    await page.getByRole('button', { name: 'Create ticket' }).click();
    await expect.poll(() => page.getByTestId('ticket-team').textContent()).toBe('Billing');
    const id = Number(/\/tickets\/(\d+)/.exec(page.url())?.[1]);
    const ticket = await stega.api<{ team_id: number; activity: { action: string }[] }>(
      'GET',
      `/api/tickets/${id}`,
    );
    expect(ticket.body.team_id).toEqual(expect.any(Number));
    await browser.screenshot('teams-02-ticket');
  });

  it('shows the share of SLA targets met, with the missed ones one click away', async () => {
    const calendarId = await calendarInsert24x7(pool);
    const now = Date.now();
    // first response due in an hour (met by the reply below), resolution already past due
    const ticketId = await ticketInsertWithClocks(pool, {
      calendarId,
      startedAt: new Date(now - 2 * 3600_000),
      firstResponseDue: new Date(now + 3600_000),
      resolutionDue: new Date(now - 60_000),
    });
    const reply = await stega.api('POST', `/api/tickets/${ticketId}/comments`, {
      body: 'Looking into it',
      agent_id: agents['Joao Member'],
    });
    expect(reply.status).toBe(201);

    await page.getByRole('link', { name: 'Reports', exact: true }).click();
    await page.getByRole('heading', { name: 'SLA achievement' }).waitFor();
    await expect.poll(() => page.getByTestId('achievement-met-share').textContent()).toBe('50 %');
    const chart = page.locator('figure#achievement-chart');
    await chart.waitFor();
    const desc = await chart.locator('svg[role="img"] desc').textContent();
    expect(desc).toContain('First response: 100 % of 1');
    expect(desc).toContain('Resolution: 0 % of 1');
    // the "N missed" buttons read on the white panel (they were white on white)
    for (const button of [
      page.getByRole('button', { name: '1 missed: Resolution' }),
      page.getByRole('button', { name: '1 missed', exact: true }),
    ]) {
      expect(await contrastOf(button)).toBeGreaterThanOrEqual(4.5);
    }
    await page.getByRole('button', { name: '1 missed: Resolution' }).click();
    const misses = page.getByRole('region', { name: 'Missed: Resolution' });
    const link = misses.getByRole('link', { name: new RegExp(`#${ticketId} `) });
    await link.waitFor();
    await browser.screenshot('teams-03-achievement');
    await link.click();
    await page.waitForURL(`**/tickets/${ticketId}`);
  });
});
