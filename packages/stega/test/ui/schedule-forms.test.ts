import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

const HOUR = 3_600_000;

/** A datetime-local value (the browser's zone, as the override form reads it). */
function localInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * The schedule forms in a real browser against `stega start`: a schedule with a layer of a
 * rotation made through the form (a bad zone and a bad rotation answered 400 next to their
 * fields first), then an override and a fallback agent; the week view and "on call now" in
 * the header follow each change.
 */
describe('on-call schedule forms in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const stega = await startStega(['start'], { DATABASE_URL: db.url, SLA_WORKERS: '1' });
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    const ids: number[] = [];
    for (const [name, email] of [
      ['Ines Oncall', 'ines@forms.test'],
      ['Joao Cover', 'joao@forms.test'],
      ['Lia Backup', 'lia@forms.test'],
    ] as const) {
      const agent = await stega.api<{ id: number }>('POST', '/api/agents', { name, email });
      expect(agent.status).toBe(201);
      ids.push(agent.body.id);
    }
    const team = await stega.api('POST', '/api/teams', { name: 'Support', member_ids: ids });
    expect(team.status).toBe(201);
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
  });

  it('adds a schedule with a layer through the form; a bad zone and a bad rotation are shown next to their fields', async () => {
    await page.getByRole('link', { name: 'Schedules', exact: true }).click();
    await page.getByText('No schedule yet').waitFor();
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Schedule name').fill('Support primary');
    await form.getByLabel('Time zone', { exact: true }).fill('Mars/Olympus_Mons');
    await form.getByLabel('Team', { exact: true }).selectOption({ label: 'Support' });
    // daily shifts from today (UTC) handing off at 00:00: Ines today, Joao tomorrow
    // choosing an agent adds them: nothing is left waiting for a button
    for (const who of ['Ines Oncall', 'Joao Cover']) {
      await form.getByLabel('Add to layer 1').selectOption({ label: who });
      await form.getByRole('list', { name: 'Layer 1 participants' }).getByText(who).waitFor();
      expect(await form.getByLabel('Add to layer 1').inputValue()).toBe('');
    }
    await form.getByLabel('Layer 1 shift length').fill('0');
    await form.getByLabel('Layer 1 shift unit').selectOption('days');
    await form.getByLabel('Layer 1 handoff time').fill('00:00');
    await form.getByLabel('Layer 1 first handoff on').fill(new Date().toISOString().slice(0, 10));
    await form.getByRole('button', { name: 'Add schedule' }).click();

    // the API's 400, each message beside its field, in words
    const zone = form.getByLabel('Time zone', { exact: true });
    await expect.poll(() => zone.getAttribute('aria-invalid')).toBe('true');
    expect(await form.locator('#f-new-schedule-time_zone-error').textContent()).toContain(
      '"Mars/Olympus_Mons" is not an IANA time zone',
    );
    const length = form.getByLabel('Layer 1 shift length');
    expect(await length.getAttribute('aria-invalid')).toBe('true');
    expect(
      await form.locator('#f-new-schedule-layers-0-shift_length-error').textContent(),
    ).toContain('must be at least 1');
    // and in the summary, in the fields' own words, each linked to its field
    const summary = page.getByRole('alert').filter({ hasText: 'Not saved' });
    const listed = await summary.textContent();
    expect(listed).toContain('Time zone: "Mars/Olympus_Mons" is not an IANA time zone');
    expect(listed).toContain('Layer 1 shift length: must be at least 1');
    expect(listed).not.toContain('layers');
    await summary.getByRole('link', { name: /^Layer 1 shift length/ }).click();
    const lengthId = await length.getAttribute('id');
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe(lengthId);
    expect(await stega.api<{ items: unknown[] }>('GET', '/api/schedules')).toMatchObject({
      body: { items: [] },
    });

    await zone.fill('UTC');
    await length.fill('1');
    await form.getByRole('button', { name: 'Add schedule' }).click();
    await page.getByRole('status').getByText('Schedule Support primary saved.').waitFor();

    const layers = page.getByRole('article', { name: 'Layers of Support primary' });
    expect(await layers.textContent()).toContain('Ines Oncall → Joao Cover, shifts of 1 day ');
    const week = page.getByRole('region', { name: 'Shifts of Support primary' });
    await week.getByRole('cell', { name: 'Ines Oncall' }).first().waitFor();
    await week.getByRole('cell', { name: 'Joao Cover' }).first().waitFor();
    const header = page.getByTestId('on-call-now');
    await expect.poll(() => header.textContent()).toContain('Support: Ines Oncall');
  });

  it('adds an override through its form: the week view and "on call now" show who covers', async () => {
    const form = page.getByRole('form', { name: 'New override' });
    const now = Date.now();
    const summary = page.getByRole('region', { name: /Overrides/ }).locator('.error-summary');
    // nobody chosen, and an end before the start: said with the form's own words
    await form.getByLabel('From').fill(localInput(now + HOUR));
    await form.getByLabel('Until').fill(localInput(now - HOUR));
    await form.getByRole('button', { name: 'Add override' }).click();
    await expect.poll(() => summary.textContent()).toContain('Who covers: choose who covers');
    await form.getByLabel('Who covers').selectOption({ label: 'Lia Backup' });
    await form.getByRole('button', { name: 'Add override' }).click();
    await expect.poll(() => summary.textContent()).toContain('Until: must be after the start');
    await form.getByLabel('From').fill(localInput(now - HOUR));
    await form.getByLabel('Until').fill(localInput(now + 2 * HOUR));
    await form.getByRole('button', { name: 'Add override' }).click();
    await page.getByText(/Lia Backup covers/).waitFor();
    const week = page.getByRole('region', { name: 'Shifts of Support primary' });
    const override = week.locator('tr[data-source="override"]');
    await expect.poll(() => override.count()).toBe(1);
    expect(await override.textContent()).toContain('Lia Backup');
    const header = page.getByTestId('on-call-now');
    await expect.poll(() => header.textContent()).toContain('Support: Lia Backup');
  });

  it('edits the layers and sets the fallback agent: a second layer restricted to weekday hours, Joao out of the rotation', async () => {
    await page.getByRole('button', { name: 'Edit Support primary' }).click();
    const form = page.getByRole('form', { name: 'Edit schedule Support primary' });
    await form.getByLabel('Fallback agent').selectOption({ label: 'Lia Backup' });
    await form.getByRole('button', { name: 'Remove Joao Cover from layer 1' }).click();
    await form.getByRole('button', { name: 'Add a layer' }).click();
    await form.getByLabel('Layer 2 name').fill('Office hours');
    await form.getByLabel('Add to layer 2').selectOption({ label: 'Joao Cover' });
    await form.getByRole('button', { name: 'Add a window to layer 2' }).click();
    // an empty set of days is refused beside the days
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) {
      await form.getByRole('group', { name: 'Layer 2 window 1 days' }).getByLabel(day).uncheck();
    }
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await form
      .getByRole('group', { name: 'Layer 2 window 1 days' })
      .locator('.field-error', { hasText: 'name at least one weekday' })
      .waitFor();
    await form.getByRole('group', { name: 'Layer 2 window 1 days' }).getByLabel('Monday').check();
    await form.getByRole('button', { name: 'Save schedule' }).click();

    const layers = page.getByRole('article', { name: 'Layers of Support primary' });
    await expect.poll(() => layers.textContent()).toContain('Office hours: Joao Cover');
    const text = await layers.textContent();
    expect(text).toContain('Layer 1: Ines Oncall, shifts of 1 day ');
    expect(text).toContain('only mon 09:00–17:00');
    expect(text).toContain('In a gap an escalation pages Lia Backup.');
    const stored = await stega.api<{
      items: { fallback_agent_id: number; layers: { participant_ids: number[] }[] }[];
    }>('GET', '/api/schedules');
    expect(stored.body.items[0]?.layers.map((l) => l.participant_ids.length)).toEqual([1, 1]);
    expect(stored.body.items[0]?.fallback_agent_id).toBeGreaterThan(0);
  });

  it('a window from 00:00 to 00:00 is the whole day: saved as until 24:00, shown again as 00:00', async () => {
    await page.getByRole('button', { name: 'Edit Support primary' }).click();
    const form = page.getByRole('form', { name: 'Edit schedule Support primary' });
    await form.getByRole('button', { name: 'Add a window to layer 1' }).click();
    const days = form.getByRole('group', { name: 'Layer 1 window 1 days' });
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) {
      await days.getByLabel(day).uncheck();
    }
    await days.getByLabel('Saturday').check();
    await days.getByLabel('Sunday').check();
    await form.getByLabel('Layer 1 window 1 from').fill('00:00');
    await form.getByLabel('Layer 1 window 1 until').fill('00:00');
    await form.getByRole('button', { name: 'Save schedule' }).click();
    const windows = async () =>
      (
        await stega.api<{
          items: { layers: { restrictions: { days: string[]; start: string; end: string }[] }[] }[];
        }>('GET', '/api/schedules')
      ).body.items[0]?.layers[0]?.restrictions;
    await expect
      .poll(windows)
      .toEqual([{ days: ['saturday', 'sunday'], start: '00:00', end: '24:00' }]);
    await page.getByRole('form', { name: 'Edit schedule Support primary' }).waitFor({
      state: 'detached',
    });
    await page.getByRole('button', { name: 'Edit Support primary' }).click();
    const again = page.getByRole('form', { name: 'Edit schedule Support primary' });
    expect(await again.getByLabel('Layer 1 window 1 until').inputValue()).toBe('00:00');
  });

  it('a change saved by someone else while the form was open is not undone: the save says so, and the form starts again from it on request', async () => {
    type Stored = {
      items: { id: number; fallback_agent_id: number | null; layers: { name: string }[] }[];
    };
    const stored = async () => (await stega.api<Stored>('GET', '/api/schedules')).body.items[0];
    const before = await stored();
    expect(before?.fallback_agent_id).not.toBeNull();
    // the form is open on the current schedule…
    if (await page.getByRole('form', { name: 'Edit schedule Support primary' }).count()) {
      await page.getByRole('button', { name: 'Cancel' }).click();
    }
    await page.getByRole('button', { name: 'Edit Support primary' }).click();
    const form = page.getByRole('form', { name: 'Edit schedule Support primary' });
    await form.getByLabel('Layer 1 name').fill('Weekday primary');
    // …when someone else takes the fallback agent away
    const theirs = await stega.api('PATCH', `/api/schedules/${before?.id}`, {
      fallback_agent_id: null,
    });
    expect(theirs.status).toBe(200);
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await form.getByText('someone else changed this schedule after you loaded it').waitFor();
    // nothing of this save was written: their change stands
    const after = await stored();
    expect(after?.fallback_agent_id).toBeNull();
    expect(after?.layers[0]?.name).not.toBe('Weekday primary');
    // 'Load their version' starts the form again from their change, and the save goes through
    await form
      .getByRole('button', { name: 'Load their version (what you typed is discarded)' })
      .click();
    await expect.poll(() => form.getByLabel('Fallback agent').inputValue()).toBe('');
    expect(await form.getByLabel('Layer 1 name').inputValue()).not.toBe('Weekday primary');
    await form.getByLabel('Layer 1 name').fill('Weekday primary');
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await expect.poll(async () => (await stored())?.layers[0]?.name).toBe('Weekday primary');
    expect((await stored())?.fallback_agent_id).toBeNull();
  });
});
