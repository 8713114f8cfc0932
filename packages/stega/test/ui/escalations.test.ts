import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';
import { calendarInsert24x7, ticketInsertWithClocks } from '../support/fixtures.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

/**
 * Escalations in a real browser against `stega start`: an escalation policy made on the
 * Escalations page and named on an SLA policy's form; a breach's chain on the ticket page,
 * fired by the jobs runner and delivered by the worker; acknowledging from the inbox and
 * from the ticket page stops it, and the ticket says who acknowledged.
 */
describe('escalations in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 2);
  const stega = await startStega(['start'], { DATABASE_URL: db.url, SLA_WORKERS: '1' });
  let browser: TestBrowser;
  let page: Page;
  let agentId = 0;

  beforeAll(async () => {
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Vera Oncall',
      email: 'vera@example.test',
    });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await pool.end();
  });

  /** A ticket under `policyId`, assigned to the agent, its first response due `agoMs` ago. */
  const breachedTicket = async (policyId: number, agoMs: number) => {
    const calendarId = await calendarInsert24x7(pool);
    const now = Date.now();
    const id = await ticketInsertWithClocks(pool, {
      calendarId,
      assigneeId: agentId,
      startedAt: new Date(now - 3_600_000),
      firstResponseDue: new Date(now - agoMs),
      resolutionDue: new Date(now + 30 * 86_400_000),
    });
    await pool.query('update stega.tickets set policy_id = $2, priority = $3 where id = $1', [
      id,
      policyId,
      'normal',
    ]);
    // the deadline job for a clock written straight into the table
    await pool.query(`select graphile_worker.add_job('check_sla_breaches', '{}'::json)`);
    return id;
  };

  let policyId = 0;

  it('makes an escalation policy and names it on an SLA policy', async () => {
    await page.getByRole('link', { name: 'Escalations', exact: true }).click();
    await page.getByRole('heading', { name: 'Escalation policies', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'New escalation policy' });
    await form.getByLabel('Policy name').fill('Support climb');
    await form.getByRole('button', { name: 'Add a level' }).click();
    const level1 = form.getByRole('group', { name: 'Level 1', exact: true });
    await level1.getByLabel('Level 1 delay (minutes after the breach)').fill('10');
    await form.getByRole('button', { name: 'Add escalation policy' }).click();
    // level 1 names nobody: the API's 400 says so
    await level1.getByText('names no target').waitFor();
    await level1.getByRole('checkbox', { name: 'Vera Oncall' }).check();
    await level1.getByLabel('Level 1 delay (minutes after the breach)').fill('30');
    await form.getByRole('button', { name: 'Add escalation policy' }).click();
    const card = page.getByRole('article', { name: 'Escalation policy Support climb' });
    await card.waitFor();
    expect(await card.textContent()).toContain('Level 1: 30 min after the breach → Vera Oncall');
    await browser.screenshot('escalations-01-policies');

    // a Slack channel set through the API is named on the card and survives a save of the emails
    const created = await stega.api<{ id: number; levels: { targets: unknown }[] }>(
      'GET',
      '/api/escalation-policies',
    );
    const escalation = (
      created.body as unknown as {
        items: {
          id: number;
          levels: { delay_minutes: number; targets: Record<string, unknown> }[];
        }[];
      }
    ).items[0];
    if (!escalation) throw new Error('no escalation policy');
    const slack = { url: 'http://127.0.0.1:9/services/T000/B000/XXXX', label: '#oncall' };
    const patched = await stega.api('PATCH', `/api/escalation-policies/${escalation.id}`, {
      levels: escalation.levels.map((l, i) => ({
        delay_minutes: l.delay_minutes,
        targets: {
          ...(l.targets as object),
          channels: i === 1 ? { slack: [slack] } : {},
        },
      })),
    });
    expect(patched.status).toBe(200);
    await page.reload();
    await card.getByText('Vera Oncall, Slack #oncall').waitFor();
    await card.getByRole('button', { name: 'Edit Support climb' }).click();
    const edit = page.getByRole('form', { name: 'Edit escalation policy Support climb' });
    await edit.getByLabel('Level 1 email addresses').fill('duty@example.test');
    await edit.getByRole('button', { name: 'Save escalation policy' }).click();
    await card.getByText('duty@example.test').waitFor();
    const saved = await stega.api<{
      levels: { targets: { channels: { slack: unknown[]; email: string[] } } }[];
    }>('GET', `/api/escalation-policies/${escalation.id}`);
    expect(saved.body.levels[1]?.targets.channels).toMatchObject({
      slack: [slack],
      email: ['duty@example.test'],
    });

    const policies = await stega.api<{
      items: {
        id: number;
        priority: string;
        requester_org: string | null;
        team_id: number | null;
      }[];
    }>('GET', '/api/sla-policies');
    const normal = policies.body.items.find(
      (p) => p.priority === 'normal' && p.requester_org === null && p.team_id === null,
    );
    policyId = normal?.id ?? 0;
    await page.goto(`${stega.url}/policies/${policyId}`);
    await page.getByLabel('Escalation policy').selectOption({ label: 'Support climb (2 levels)' });
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect
      .poll(async () => {
        const p = await stega.api<{ escalation_policy_id: number | null }>(
          'GET',
          `/api/sla-policies/${policyId}`,
        );
        return p.body.escalation_policy_id;
      })
      .toEqual(expect.any(Number));
  });

  it('shows the chain on the ticket page and acknowledges it from the inbox', async () => {
    const ticketId = await breachedTicket(policyId, 5 * 60_000);
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    const chain = page.getByRole('article', { name: 'Escalation of the First response breach' });
    await chain.waitFor({ timeout: 30_000 });
    await expect
      .poll(() => chain.locator('[data-level="0"]').getAttribute('data-fired'), {
        timeout: 30_000,
      })
      .toBe('true');
    expect(await chain.locator('[data-level="1"]').textContent()).toContain('due');
    expect(await chain.getAttribute('data-state')).toBe('running');
    await browser.screenshot('escalations-02-ticket-chain');

    await page.getByRole('link', { name: /^Inbox/ }).click();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    const ack = page.getByRole('button', { name: `Acknowledge the escalation on #${ticketId}` });
    await ack.waitFor({ timeout: 30_000 });
    await ack.click();
    await page.getByRole('status').filter({ hasText: 'Acknowledged' }).waitFor();
    await browser.screenshot('escalations-03-inbox');

    await page.goto(`${stega.url}/tickets/${ticketId}`);
    await expect
      .poll(() => page.getByTestId('escalation-state').first().textContent())
      .toMatch(/^Acknowledged by admin at .*\(in the app\)$/);
    const activity = page.getByRole('region', { name: 'Activity' });
    await expect
      .poll(() => activity.textContent())
      .toContain('acknowledged the first-response escalation, after level 0');
  });

  it('acknowledges from the ticket page', async () => {
    const ticketId = await breachedTicket(policyId, 60_000);
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    const chain = page.getByRole('article', { name: 'Escalation of the First response breach' });
    await chain.waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await expect.poll(() => chain.getAttribute('data-state')).toBe('stopped');
    expect(await page.getByTestId('escalation-state').textContent()).toContain(
      'Acknowledged by admin',
    );
    await expect(
      page.getByRole('button', { name: 'Acknowledge', exact: true }).count(),
    ).resolves.toBe(0);
    await browser.screenshot('escalations-04-acknowledged');
    // acknowledged on the ticket page: the inbox's escalation alert keeps no Acknowledge button
    await page.getByRole('link', { name: /^Inbox/ }).click();
    const level = page
      .locator('.inbox-item', { has: page.locator('.badge.alert-escalation') })
      .filter({ hasText: `#${ticketId} ` });
    await level.first().waitFor({ timeout: 30_000 });
    expect(
      await page
        .getByRole('button', { name: `Acknowledge the escalation on #${ticketId}` })
        .count(),
    ).toBe(0);
    const api = await stega.api<{
      escalations: { acknowledged_via: string; stop_reason: string }[];
    }>('GET', `/api/tickets/${ticketId}`);
    expect(api.body.escalations[0]).toMatchObject({
      stop_reason: 'acknowledged',
      acknowledged_via: 'app',
    });
  });
});
