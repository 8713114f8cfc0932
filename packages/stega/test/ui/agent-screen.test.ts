import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

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
    // a reply's files may come to 1 MB here (default 25 MB), so that a test can pass it
    INBOUND_MAX_MESSAGE_BYTES: String(1024 * 1024),
  });
  let browser: TestBrowser;
  let page: Page;
  let anaId = 0;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
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
    expect(await session.json()).toEqual({
      role: 'agent',
      name: 'Ana Agent',
      agent_id: anaId,
      time_zone: null,
      via: 'token',
      csrf_token: null,
    });
    await page.locator('tr[data-token-id]', { hasText: 'Ana laptop' }).waitFor();
    await browser.screenshot('agents-01-agents-and-tokens');
  });

  it("edits an agent's time zone on the Agents page; a wrong zone is named next to the field", async () => {
    const row = page.locator(`tr[data-agent-id="${anaId}"]`);
    await row.getByRole('button', { name: 'Edit Ana Agent' }).click();
    const zone = row.getByLabel('Time zone');
    await zone.fill('Mars/Olympus');
    await row.getByRole('button', { name: 'Save agent' }).click();
    expect(await errorOf(zone)).toContain('IANA time zone');

    await zone.fill('America/New_York');
    await row.getByRole('button', { name: 'Save agent' }).click();
    await row.getByText('America/New_York').waitFor();
    const ana = await stega.api<{ time_zone: string | null; effective_time_zone: string }>(
      'GET',
      `/api/agents/${anaId}`,
    );
    expect(ana.body.time_zone).toBe('America/New_York');
    expect(ana.body.effective_time_zone).toBe('America/New_York');

    // emptied, the agent inherits again
    await row.getByRole('button', { name: 'Edit Ana Agent' }).click();
    await row.getByLabel('Time zone').fill('');
    await row.getByRole('button', { name: 'Save agent' }).click();
    await row.getByText('(inherited)').waitFor();
    const after = await stega.api<{ time_zone: string | null }>('GET', `/api/agents/${anaId}`);
    expect(after.body.time_zone).toBeNull();
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

  it('shows a team alert once, with how many members read it, and counts it once in the bell', async () => {
    const bo = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Bo Agent',
      email: 'bo@example.test',
    });
    const team = await stega.api<{ id: number }>('POST', '/api/teams', {
      name: 'Bell team',
      member_ids: [anaId, bo.body.id],
    });
    expect(team.status, JSON.stringify(team.body)).toBe(201);
    const bell = page.getByRole('link', { name: /^Inbox, \d+ unread$/ });
    await page.getByRole('link', { name: 'Tickets', exact: true }).click();
    await expect.poll(() => bell.getAttribute('data-unread')).toBe('0');

    const ticket = await newTicket({ subject: 'Team bell test: printer', team_id: team.body.id });
    const due = ticket.clocks.find((c) => c.kind === 'first_response')?.due_at;
    await detectBreachesAt(new Date(Date.parse(due as string) + 1000));

    // one copy per member is stored; the admin's bell and inbox count the alert once
    const copiesOf = async () =>
      (
        await stega.api<{ items: { id: number; ticket_id: number; agent_id: number | null }[] }>(
          'GET',
          `/api/alerts?ticket_id=${ticket.id}`,
        )
      ).body.items;
    await expect.poll(async () => (await copiesOf()).length, { timeout: 30_000 }).toBe(2);
    await expect.poll(() => bell.getAttribute('data-unread'), { timeout: 30_000 }).toBe('1');
    await bell.click();
    const item = page.locator('.inbox-item', { hasText: 'Team bell test: printer' });
    await expect.poll(() => item.count()).toBe(1);
    expect(await item.textContent()).toContain('for the team’s 2 members · unread by all');

    // Ana reads her copy: the alert stays unread for Bo, and says who read it
    const anaCopy = (await copiesOf()).find((c) => c.agent_id === anaId);
    expect(anaCopy).toBeDefined();
    const read = await stega.api('POST', `/api/alerts/${anaCopy?.id}/read`);
    expect(read.status).toBe(200);
    await expect
      .poll(() => item.textContent(), { timeout: 15_000 })
      .toContain('read by Ana Agent (1 of 2)');
    expect(await item.getAttribute('class')).toContain('unread');

    // the admin marks it read for the whole team
    await item.getByRole('button', { name: /^Mark read: .* \(for the whole team\)$/ }).click();
    await expect.poll(() => bell.getAttribute('data-unread')).toBe('0');
    expect(await item.textContent()).toContain('(2 of 2)');
  });

  it('lets the admin reply as an agent, which counts as the first response', async () => {
    const ticket = await newTicket({ subject: 'Admin reply test' });
    await page.goto(`${stega.url}/tickets/${ticket.id}`);
    const replyAs = page.getByLabel('Reply as');
    // the admin token replies as no agent until it picks one, never as the list's first
    await expect.poll(() => replyAs.inputValue()).toBe('');
    expect(await page.locator('.reply-as').textContent()).toContain(
      'As no agent: a comment of yours is not a first response.',
    );
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

  it('attaches the files chosen to a comment, and says in words when they are too large', async () => {
    const ticket = await newTicket({ subject: 'Files test' });
    await page.goto(`${stega.url}/tickets/${ticket.id}`);
    const picker = page.getByLabel('Attach files');
    // a ticket made through the API has no mailbox: the form says its public reply is not emailed
    await page.getByTestId('not-emailed').waitFor();
    expect(await page.getByTestId('not-emailed').textContent()).toContain(
      'a public reply is not emailed',
    );
    await picker.setInputFiles([
      { name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1200 * 1024) },
    ]);
    const chosen = page.getByRole('list', { name: 'Files to attach' });
    expect(await chosen.textContent()).toContain('huge.bin (1.2 MB)');
    await page.getByLabel('Add a comment').fill('Here is the dump.');
    await page.getByRole('button', { name: 'Add comment' }).click();
    expect(await errorOf(picker)).toContain('the most one reply may carry');
    // nothing was stored; the chosen file stays listed until removed
    const before = await stega.api<{ comments: unknown[] }>('GET', `/api/tickets/${ticket.id}`);
    expect(before.body.comments).toEqual([]);
    await page.getByRole('button', { name: 'Remove huge.bin' }).click();
    await picker.setInputFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('the printer log') },
    ]);
    expect(await chosen.textContent()).toContain('notes.txt (15 bytes)');
    await page.getByRole('button', { name: 'Add comment' }).click();
    const comment = page.locator('.comments li', { hasText: 'Here is the dump.' });
    await comment.getByRole('list', { name: 'Attached files' }).waitFor();
    expect(await comment.textContent()).toContain('notes.txt');
    expect(await page.getByRole('list', { name: 'Files to attach' }).count()).toBe(0);
    // an internal note says so where it stands in the thread, apart from replies
    await page.getByLabel('Add a comment').fill('The customer is on the old firmware.');
    await page.getByText('Public reply (visible to the requester)').click();
    await page.getByRole('button', { name: 'Add comment' }).click();
    const note = page.locator('.comments li.note', { hasText: 'old firmware' });
    await note.waitFor();
    expect(await note.locator('.note-tag').textContent()).toBe('Internal note (agents only)');
    expect(await comment.evaluate((li) => li.className)).toBe('reply');
  });

  it("shows the error next to the name when a policy's name is cleared, and saves the assignee email", async () => {
    const policies = await stega.api<{ items: { id: number; name: string }[] }>(
      'GET',
      '/api/sla-policies',
    );
    const policy = policies.body.items[0];
    expect(policy).toBeDefined();
    await page.goto(`${stega.url}/policies/${policy?.id}`);
    const name = page.getByLabel('Name', { exact: true });
    await expect.poll(() => name.inputValue()).toBe(policy?.name);
    await name.fill('');
    await page.getByRole('button', { name: 'Save policy' }).click();
    expect(await errorOf(name)).toContain('must not be empty');
    // the summary names the field by its label, not its column
    expect(await page.locator('.error-summary').textContent()).toContain('Name: must not be empty');
    expect(await page.locator('.notice.ok').isVisible()).toBe(false);
    const stored = await stega.api<{ name: string }>('GET', `/api/sla-policies/${policy?.id}`);
    expect(stored.body.name).toBe(policy?.name);
    await browser.screenshot('agents-03-policy-name-cleared');

    await name.fill(policy?.name ?? '');
    await page.getByLabel('Email the assignee').check();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved.').waitFor();
    const saved = await stega.api<{ alert_channels: { email_assignee: boolean } }>(
      'GET',
      `/api/sla-policies/${policy?.id}`,
    );
    expect(saved.body.alert_channels.email_assignee).toBe(true);
  });

  it('asks once for what a page shows twice: the policy pages fetch the calendars and teams once', async () => {
    const asked: string[] = [];
    const onRequest = (request: { url(): string }) => {
      const { pathname } = new URL(request.url());
      if (pathname === '/api/calendars' || pathname === '/api/teams') asked.push(pathname);
    };
    page.on('request', onRequest);
    try {
      // a fresh page: nothing in the query cache yet
      await page.goto(`${stega.url}/policies`);
      await page.getByRole('heading', { name: 'SLA policies', level: 1 }).waitFor();
      await page.locator('table tbody tr').first().waitFor();
      await page.getByRole('link', { name: 'New policy' }).click();
      await page.getByLabel('Business calendar').waitFor();
      await expect.poll(() => page.getByLabel('Business calendar').inputValue()).not.toBe('');
      // the list, the form and its sections share one answer of each
      expect(asked.filter((p) => p === '/api/calendars')).toHaveLength(1);
      expect(asked.filter((p) => p === '/api/teams')).toHaveLength(1);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('keeps a policy’s retry and fallback through the form, and edits them', async () => {
    const calendars = await stega.api<{ items: { id: number }[] }>('GET', '/api/calendars');
    const retry = { delays_seconds: [1, 5], give_up_after_hours: 48 };
    const fallback = {
      after_minutes: 5,
      email: ['lead@fallback.test'],
      email_assignee: false,
      email_team_lead: true,
      webhooks: [],
      slack: [],
      teams: [],
      pagerduty: [],
    };
    const created = await stega.api<{ id: number }>('POST', '/api/sla-policies', {
      name: 'Fallback policy',
      priority: 'low',
      requester_org: 'Fallback Co',
      first_response_minutes: 60,
      resolution_minutes: 240,
      calendar_id: calendars.body.items[0]?.id,
      alert_channels: { in_app: true, email: ['oncall@fallback.test'], retry, fallback },
    });
    expect(created.status).toBe(201);
    const url = `/api/sla-policies/${created.body.id}`;
    type Channels = { alert_channels: Record<string, unknown> };

    await page.goto(`${stega.url}/policies/${created.body.id}`);
    const name = page.getByLabel('Name', { exact: true });
    await expect.poll(() => name.inputValue()).toBe('Fallback policy');
    // the form shows what the policy has
    expect(await page.getByLabel('Fall back after (minutes)').inputValue()).toBe('5');
    expect(await page.getByLabel('Keep trying for (hours)').inputValue()).toBe('48');
    expect(await page.getByLabel('Fallback email recipients').inputValue()).toBe(
      'lead@fallback.test',
    );
    expect(
      await page.getByLabel('Fall back to the email of the ticket’s team lead').isChecked(),
    ).toBe(true);

    // a change of the primary channels only: retry and fallback stay as they were
    await page.getByLabel('Email the assignee', { exact: true }).check();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved.').waitFor();
    const kept = await stega.api<Channels>('GET', url);
    expect(kept.body.alert_channels).toEqual({
      in_app: true,
      email: ['oncall@fallback.test'],
      email_assignee: true,
      webhooks: [],
      slack: [],
      teams: [],
      pagerduty: [],
      retry,
      fallback,
    });

    // edit the fallback and the retry horizon in the form
    await page.getByLabel('Fall back after (minutes)').fill('10');
    await page.getByLabel('Fall back to the assignee’s email').check();
    await page
      .getByLabel('Fallback email recipients')
      .fill('lead@fallback.test\nboss@fallback.test');
    await page.getByLabel('Keep trying for (hours)').fill('72');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect
      .poll(async () => (await stega.api<Channels>('GET', url)).body.alert_channels)
      .toEqual({
        in_app: true,
        email: ['oncall@fallback.test'],
        email_assignee: true,
        webhooks: [],
        slack: [],
        teams: [],
        pagerduty: [],
        retry: { delays_seconds: [1, 5], give_up_after_hours: 72 },
        fallback: {
          after_minutes: 10,
          email: ['lead@fallback.test', 'boss@fallback.test'],
          email_assignee: true,
          email_team_lead: true,
          webhooks: [],
          slack: [],
          teams: [],
          pagerduty: [],
        },
      });

    // a bad value is shown next to its field
    await page.getByLabel('Fall back after (minutes)').fill('0');
    await page.getByRole('button', { name: 'Save policy' }).click();
    expect(await errorOf(page.getByLabel('Fall back after (minutes)'))).toContain(
      'more than 0 minutes',
    );
    await page.getByLabel('Fall back after (minutes)').fill('10');

    // turning the fallback off removes it; the retry schedule stays
    await page.getByLabel(/alert these too/).uncheck();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect
      .poll(async () => (await stega.api<Channels>('GET', url)).body.alert_channels.fallback)
      .toBeUndefined();
    expect((await stega.api<Channels>('GET', url)).body.alert_channels.retry).toEqual({
      delays_seconds: [1, 5],
      give_up_after_hours: 72,
    });
  });

  it('a policy saved by someone else while its page is open: the save says so, and the form starts again from their version on request', async () => {
    const calendars = await stega.api<{ items: { id: number }[] }>('GET', '/api/calendars');
    const created = await stega.api<{ id: number }>('POST', '/api/sla-policies', {
      name: 'Shared policy',
      priority: 'low',
      requester_org: 'Shared Co',
      first_response_minutes: 60,
      resolution_minutes: 240,
      calendar_id: calendars.body.items[0]?.id,
    });
    expect(created.status).toBe(201);
    const url = `/api/sla-policies/${created.body.id}`;
    await page.goto(`${stega.url}/policies/${created.body.id}`);
    const name = page.getByLabel('Name', { exact: true });
    await expect.poll(() => name.inputValue()).toBe('Shared policy');
    await name.fill('Mine');
    // meanwhile someone else renames it
    expect((await stega.api('PATCH', url, { name: 'Theirs' })).status).toBe(200);
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('someone else changed this SLA policy after you loaded it').waitFor();
    expect((await stega.api<{ name: string }>('GET', url)).body.name).toBe('Theirs');
    await page
      .getByRole('button', { name: 'Load their version (what you typed is discarded)' })
      .click();
    await expect.poll(() => name.inputValue()).toBe('Theirs');
    await page.getByText('Loaded the version saved by someone else').waitFor();
    await name.fill('Mine');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await stega.api<{ name: string }>('GET', url)).body.name).toBe('Mine');
  });

  it('sorts open work by next SLA deadline, and finds a ticket by a word in a comment', async () => {
    for (const priority of ['low', 'urgent', 'normal', 'high']) {
      await newTicket({ subject: `Sort test ${priority}`, priority });
    }
    const commented = await newTicket({ subject: 'Search test: nothing in the subject' });
    const note = await stega.api('POST', `/api/tickets/${commented.id}/comments`, {
      body: 'The customer mentions a marmalade stain on the keyboard.',
      public_reply: false,
    });
    expect(note.status).toBe(201);

    await page.goto(`${stega.url}/tickets`);
    await page.getByRole('link', { name: 'Open work' }).waitFor();
    await page.getByLabel('Sort by').selectOption('deadline');
    const rows = page.locator('tr[data-ticket-id]');
    await expect.poll(() => rows.count()).toBeGreaterThan(4);
    // each row's next deadline: the earliest due time of its running clocks
    const deadlines = await rows.evaluateAll((trs) =>
      trs.map((tr) => {
        const dues = [...tr.querySelectorAll('[role="timer"][data-state="running"]')].map((el) =>
          Date.parse(el.getAttribute('data-due') ?? ''),
        );
        return dues.length > 0 ? Math.min(...dues) : Number.POSITIVE_INFINITY;
      }),
    );
    expect(deadlines).toEqual([...deadlines].sort((a, b) => a - b));
    expect(deadlines[0]).toBeLessThan(Number.POSITIVE_INFINITY);
    await browser.screenshot('agents-04-sorted-by-deadline');

    await page.getByLabel('Search tickets').fill('marmalade');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/q=marmalade/);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-ticket-id')).toBe(String(commented.id));
    await browser.screenshot('agents-05-search');
  });

  it('puts the reply box within the first two screens of the ticket page on a 390 px screen', async () => {
    const ticket = await newTicket({
      subject: 'Narrow test',
      description: 'A long request. '.repeat(40),
    });
    for (let i = 1; i <= 6; i++) {
      await stega.api('POST', `/api/tickets/${ticket.id}/comments`, {
        body: `Comment ${i}: ${'some words of the thread '.repeat(12)}`,
        public_reply: false,
      });
    }
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${stega.url}/tickets/${ticket.id}`);
      const reply = page.getByLabel('Add a comment');
      await reply.waitFor();
      const box = await reply.boundingBox();
      const top =
        (box?.y ?? Number.POSITIVE_INFINITY) + Number(await page.evaluate('window.scrollY'));
      expect(top).toBeLessThan(2 * 844);
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - window.innerWidth',
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await browser.screenshot('agents-06-narrow-ticket');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
