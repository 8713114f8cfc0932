import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, type TestBrowser } from './browser.js';

interface TicketBody {
  id: number;
  first_responded_at: string | null;
  clocks: { kind: string; due_at: string; state: string }[];
  activity: { action: string; details: Record<string, unknown> }[];
}

/**
 * An agent's screen in a real browser against `stega start`: the bell and inbox, agents and
 * tokens managed in the UI, replying as an agent, the words of forms and pages, and the lists.
 */
describe('the agent screen in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 2);
  const smtp = await startSmtpSink();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    SLA_WORKERS: '1',
  });
  let browser: TestBrowser;
  let page: Page;
  let anaId = 0;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
    await page.goto(`${stega.url}/tickets`);
    await page.getByLabel('API token').fill(stega.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await Promise.all([pool.end(), smtp.stop()]);
  });

  async function newTicket(fields: Record<string, unknown>): Promise<TicketBody> {
    const created = await stega.api<TicketBody>('POST', '/api/tickets', {
      requester_name: 'Rita Requester',
      requester_email: 'rita@example.test',
      priority: 'high',
      ...fields,
    });
    expect(created.status).toBe(201);
    return created.body;
  }

  /** Records every breach due by `at` (the detector on a moved clock), then closes a tick. */
  async function detectBreachesAt(at: Date) {
    const recorded = await inTransaction(pool, (tx) => breachRecordDue(tx, at, 100));
    await pool.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
    return recorded;
  }

  async function errorOf(input: Locator): Promise<string> {
    await expect.poll(() => input.getAttribute('aria-invalid')).toBe('true');
    const ids = (await input.getAttribute('aria-describedby')) ?? '';
    const errorId = ids.split(' ').find((id) => id.endsWith('-error'));
    expect(errorId).toBeDefined();
    return (await page.locator(`#${errorId}`).textContent()) ?? '';
  }

  it('adds an agent and issues its token in the UI (an agent token needs its agent)', async () => {
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('heading', { name: 'Agents and tokens' }).waitFor();
    await page.getByLabel('Agent name').fill('Ana Agent');
    await page.getByLabel('Agent email').fill('ana@example.test');
    await page.getByRole('button', { name: 'Add agent' }).click();
    await page.locator('tr[data-agent-id]', { hasText: 'Ana Agent' }).waitFor();
    const agents = await stega.api<{ items: { id: number; name: string }[] }>('GET', '/api/agents');
    anaId = agents.body.items.find((a) => a.name === 'Ana Agent')?.id ?? 0;
    expect(anaId).toBeGreaterThan(0);

    // an agent token without its agent: the error sits next to the agent field
    await page.getByLabel('Token name').fill('Ana laptop');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const agentField = page.locator('#f-new-token-agent_id');
    expect(await errorOf(agentField)).toContain('belongs to an agent');

    await agentField.selectOption(String(anaId));
    await page.getByRole('button', { name: 'Issue token' }).click();
    const issued = (await page.getByTestId('issued-token').textContent()) ?? '';
    expect(issued).toMatch(/^stg_/);
    const session = await fetch(`${stega.url}/api/session`, {
      headers: { authorization: `Bearer ${issued}` },
    });
    expect(await session.json()).toEqual({ role: 'agent', name: 'Ana Agent', agent_id: anaId });
    await page.locator('tr[data-token-id]', { hasText: 'Ana laptop' }).waitFor();
    await browser.screenshot('agents-01-agents-and-tokens');
  });

  it('rings the bell and fills the inbox live when an alert arrives; marking it read clears it', async () => {
    const bell = page.getByRole('link', { name: /^Inbox, \d+ unread$/ });
    await page.getByRole('link', { name: 'Tickets', exact: true }).click();
    await expect.poll(() => bell.getAttribute('data-unread')).toBe('0');

    const ticket = await newTicket({ subject: 'Bell test: VPN down', assignee_id: anaId });
    const due = ticket.clocks.find((c) => c.kind === 'first_response')?.due_at;
    expect(due).toBeDefined();
    const recorded = await detectBreachesAt(new Date(Date.parse(due as string) + 1000));
    expect(recorded.map((r) => r.ticketId)).toContain(ticket.id);

    // no reload: the bell counts the new alert once the sla-breach-worker delivered it
    await expect.poll(() => bell.getAttribute('data-unread'), { timeout: 30_000 }).toBe('1');
    await bell.click();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    const item = page.locator('.inbox-item.unread', { hasText: 'Bell test: VPN down' });
    await item.waitFor();
    await browser.screenshot('agents-02-inbox');
    await item.getByRole('button', { name: /^Mark read/ }).click();
    await expect.poll(() => bell.getAttribute('data-unread')).toBe('0');
    await page.locator('.inbox-item', { hasText: 'Bell test: VPN down' }).waitFor();
    expect(await page.locator('.inbox-item.unread').count()).toBe(0);

    // the item links to its ticket
    await page.getByRole('link', { name: `#${ticket.id} Bell test: VPN down` }).click();
    await page.waitForURL(new RegExp(`/tickets/${ticket.id}$`));
  });

  it('lets the admin reply as an agent, which counts as the first response', async () => {
    const ticket = await newTicket({ subject: 'Admin reply test' });
    await page.goto(`${stega.url}/tickets/${ticket.id}`);
    const replyAs = page.getByLabel('Reply as');
    await replyAs.selectOption({ label: 'Ana Agent' });
    await page.getByLabel('Add a comment').fill('Looking into it now.');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.locator('.comments li', { hasText: 'Looking into it now.' }).waitFor();

    const after = await stega.api<TicketBody>('GET', `/api/tickets/${ticket.id}`);
    expect(after.body.first_responded_at).not.toBeNull();
    const commented = after.body.activity.find((a) => a.action === 'commented');
    expect(commented?.details).toMatchObject({ agent_id: anaId, first_response: true });
    expect(after.body.clocks.find((c) => c.kind === 'first_response')?.state).toBe('stopped');
  });
});
