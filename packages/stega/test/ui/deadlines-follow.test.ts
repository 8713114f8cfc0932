import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

/**
 * Running deadlines follow policy and calendar edits, and a policy's warning thresholds, in a
 * real browser against `stega start`: the policy form sets thresholds and whom a change
 * reaches, the ticket page lists each warning and says in words which edit moved a due time.
 */
describe('deadlines that follow edits, in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const stega = await startStega(['start'], { DATABASE_URL: db.url, SLA_WORKERS: '1' });
  let browser: TestBrowser;
  let page: Page;
  let policyId = 0;
  let calendarId = 0;
  let ticketId = 0;

  beforeAll(async () => {
    const day = [{ start: '00:00', end: '24:00' }];
    const calendar = await stega.api<{ id: number }>('POST', '/api/calendars', {
      name: 'Support hours',
      time_zone: 'UTC',
      weekly_hours: Object.fromEntries(
        ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [
          d,
          day,
        ]),
      ),
      holidays: [],
    });
    expect(calendar.status).toBe(201);
    calendarId = calendar.body.id;
    const policy = await stega.api<{ id: number }>('POST', '/api/sla-policies', {
      name: 'Acme normal',
      priority: 'normal',
      requester_org: 'Acme',
      first_response_minutes: 60,
      resolution_minutes: 600,
      calendar_id: calendarId,
    });
    expect(policy.status).toBe(201);
    policyId = policy.body.id;
    const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
      subject: 'Export to CSV times out',
      requester_name: 'Marta',
      requester_email: 'marta@acme.example',
      requester_org: 'Acme',
      priority: 'normal',
    });
    expect(ticket.status).toBe(201);
    ticketId = ticket.body.id;

    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
  });

  it('sets thresholds and a new target on the policy form; the running ticket follows, in words', async () => {
    await page.goto(`${stega.url}/policies/${policyId}`);
    await page.getByRole('heading', { name: 'Acme normal', level: 1 }).waitFor();
    const warnings = page.getByLabel('Warnings before the breach (% of the target)');
    await warnings.fill('50, 120');
    await page.getByRole('button', { name: 'Save policy' }).click();
    // the API's 400 names the field, said in the field's unit (per cent, not shares)
    await expect.poll(() => warnings.getAttribute('aria-invalid')).toBe('true');
    await page.locator('.field-error', { hasText: 'must be below 100 %' }).first().waitFor();
    await warnings.fill('50, 80');
    await page.getByLabel('First response target (business minutes)').fill('120');
    expect(
      await page.getByLabel('Apply changed targets, warnings or calendar to').inputValue(),
    ).toBe('running');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved.').waitFor();
    await browser.screenshot('deadlines-01-policy-form');

    await page.goto(`${stega.url}/tickets/${ticketId}`);
    const activity = page.getByRole('region', { name: 'Activity', exact: true });
    await expect
      .poll(() => activity.textContent(), { timeout: 20_000 })
      .toMatch(
        /set the first-response target to 2 h, moving its due time from .+ to .+ \(SLA policy 'Acme normal' edited\)/,
      );
    await expect
      .poll(() => page.getByTestId('warnings-first_response').textContent())
      .toMatch(/^50 % at .+; 80 % at .+$/);
  });

  it('says which calendar edit moved a due time', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const edit = await stega.api('PATCH', `/api/calendars/${calendarId}`, {
      holidays: [{ date: today }],
    });
    expect(edit.status).toBe(200);
    const activity = page.getByRole('region', { name: 'Activity', exact: true });
    await expect
      .poll(() => activity.textContent(), { timeout: 20_000 })
      .toMatch(/moved the resolution due time from .+ to .+ \(calendar 'Support hours' edited\)/);
    await browser.screenshot('deadlines-02-ticket-activity');
  });
});
