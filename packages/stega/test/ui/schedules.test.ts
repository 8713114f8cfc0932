import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

/** The Schedules page and "on call now" in the header, in a real browser against `stega start`. */
describe('on-call schedules in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const stega = await startStega(['start'], { DATABASE_URL: db.url, SLA_WORKERS: '1' });
  let browser: TestBrowser;
  let page: Page;
  const agents: Record<string, number> = {};

  beforeAll(async () => {
    for (const [name, email] of [
      ['Ines Oncall', 'ines@example.test'],
      ['Joao Cover', 'joao@example.test'],
    ] as const) {
      const agent = await stega.api<{ id: number }>('POST', '/api/agents', { name, email });
      expect(agent.status).toBe(201);
      agents[name] = agent.body.id;
    }
    const team = await stega.api<{ id: number }>('POST', '/api/teams', { name: 'Ops' });
    expect(team.status).toBe(201);
    // business hours only: every week has gaps (nights and weekends)
    const schedule = await stega.api('POST', '/api/schedules', {
      name: 'Ops primary',
      time_zone: 'UTC',
      team_id: team.body.id,
      layers: [
        {
          name: 'Weekdays',
          participant_ids: [agents['Ines Oncall']],
          shift_length: 1,
          shift_unit: 'weeks',
          handoff_time: '09:00',
          start_date: '2026-01-05',
          restrictions: [
            {
              days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
              start: '09:00',
              end: '17:00',
            },
          ],
        },
      ],
    });
    expect(schedule.status).toBe(201);
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
  });

  it('shows who is on call now per team in the header', async () => {
    const header = page.getByTestId('on-call-now');
    await header.waitFor();
    // Ines on weekdays 09:00-17:00 UTC, nobody otherwise: either way the team is named
    expect(await header.textContent()).toMatch(/On call: Ops: (Ines Oncall|nobody)/);
  });

  it('shows a week of final shifts with the gaps marked, and adds an override', async () => {
    await page.getByRole('link', { name: 'Schedules', exact: true }).click();
    await page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
    const week = page.getByRole('region', { name: 'Shifts of Ops primary' });
    await week.getByRole('cell', { name: 'Ines Oncall' }).first().waitFor();
    expect(await week.locator('tr[data-source="gap"]').count()).toBeGreaterThan(0);
    expect(await week.locator('tr[data-source="layer"]').count()).toBe(5);

    const form = page.getByRole('form', { name: 'New override' });
    const day = new Date(Date.now() + 2 * 86_400_000);
    const local = (hour: number) =>
      `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00`;
    await form.getByLabel('Who covers').selectOption({ label: 'Joao Cover' });
    // the wrong way round first: the API's 400 names the field
    await form.getByLabel('From').fill(local(12));
    await form.getByLabel('Until').fill(local(10));
    await form.getByRole('button', { name: 'Add override' }).click();
    await expect.poll(() => form.getByLabel('Until').getAttribute('aria-invalid')).toBe('true');
    await form.getByLabel('From').fill(local(10));
    await form.getByLabel('Until').fill(local(12));
    await form.getByRole('button', { name: 'Add override' }).click();
    await page.getByText(/Joao Cover covers/).waitFor();
  });
});
