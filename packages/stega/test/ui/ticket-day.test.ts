import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startAnyReceiver } from '../../../../test-support/service-receivers.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';
import { calendarInsert24x7, ticketInsertWithClocks } from '../support/fixtures.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

interface Entry {
  action: string;
  details: Record<string, unknown>;
}

/** The reader's zone: half an hour off UTC, so a time shown in UTC would be visibly wrong. */
const ZONE = 'Asia/Kolkata';

/**
 * Issue 24, the agent's day, in a real browser against `stega start`: breaches and failed
 * deliveries in the ticket's activity, in words and the reader's zone; older comments and
 * activity a page at a time; the tickets list's next-reply column; the ticket page on a phone.
 */
describe("the ticket page through an agent's day", async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 2);
  const smtp = await startSmtpSink();
  const receiver = await startAnyReceiver();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    SLA_WORKERS: '1',
  });
  let browser: TestBrowser;
  let page: Page;
  let agentToken = '';
  let relayToken = '';
  const calendarId = await calendarInsert24x7(pool);

  beforeAll(async () => {
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Kiran Reader',
      email: 'kiran@example.test',
      time_zone: ZONE,
    });
    expect(agent.status).toBe(201);
    const token = await stega.api<{ token: string }>('POST', '/api/tokens', {
      name: 'Kiran browser',
      role: 'agent',
      agent_id: agent.body.id,
    });
    agentToken = token.body.token;
    const relay = await stega.api<{ token: string }>('POST', '/api/tokens', {
      name: 'mail relay',
      role: 'integration',
      scopes: ['comments:requester'],
    });
    relayToken = relay.body.token;
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, { url: stega.url, token: agentToken });
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await Promise.all([pool.end(), smtp.stop(), receiver.stop()]);
  });

  /** Records every breach due by now and closes a tick, so the workers see the events. */
  async function detectBreaches() {
    const recorded = await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(), 100));
    await pool.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
    return recorded;
  }

  async function activityOf(ticketId: number): Promise<Entry[]> {
    const page = await stega.api<{ items: Entry[] }>(
      'GET',
      `/api/tickets/${ticketId}/activity?limit=200`,
    );
    return page.body.items;
  }

  async function comment(ticketId: number, body: string, fromRequester = false) {
    const response = await fetch(`${stega.url}/api/tickets/${ticketId}/comments`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fromRequester ? relayToken : stega.token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(fromRequester ? { body, from_requester: true } : { body }),
    });
    expect(response.status, await response.clone().text()).toBe(201);
  }

  /** A ticket of no team (every agent sees it) whose first response fell due 3 minutes ago. */
  async function breachedTicket(alertChannels: Record<string, unknown>): Promise<number> {
    const now = Date.now();
    const policy = await pool.query(
      `insert into stega.sla_policies (name, priority, requester_org, first_response_minutes,
                                       resolution_minutes, calendar_id, alert_channels)
       values ($1, 'high', $1, 60, 240, $2, $3) returning id`,
      [`day ${now}-${Math.random()}`, calendarId, alertChannels],
    );
    const ticketId = await ticketInsertWithClocks(pool, {
      calendarId,
      startedAt: new Date(now - 63 * 60_000),
      firstResponseDue: new Date(now - 3 * 60_000),
      resolutionDue: new Date(now + 180 * 60_000),
    });
    await pool.query('update stega.tickets set policy_id = $2 where id = $1', [
      ticketId,
      policy.rows[0]?.id,
    ]);
    return ticketId;
  }

  it('the activity says when a clock breached and which alert failed for good, in words and the reader’s zone', async () => {
    receiver.script({ status: 404, body: 'no such hook' });
    const ticketId = await breachedTicket({
      in_app: false,
      webhooks: [{ url: receiver.urlOf('/hooks/T0SECRET/B0SECRET/abc-wxyz') }],
    });
    const [breach] = (await detectBreaches()).filter((b) => b.ticketId === ticketId);
    expect(breach).toBeDefined();
    const failed = await eventually(
      async () => (await activityOf(ticketId)).find((a) => a.action === 'delivery_failed'),
      'the failed webhook in the activity',
      PROCESS_PATIENCE,
    );
    expect(failed.details).toMatchObject({ channel: 'webhook', reason: 'rejected' });
    const breached = (await activityOf(ticketId)).find((a) => a.action === 'sla_breached');
    const dueAt = String(breached?.details.due_at);

    await page.goto(`${stega.url}/tickets/${ticketId}`);
    const activity = page.getByRole('region', { name: 'Activity' });
    const breachLine = activity.locator('li[data-action="sla_breached"]');
    await breachLine.waitFor();
    const dueShown = new Intl.DateTimeFormat('en-GB', {
      hour: '2-digit',
      minute: '2-digit',
      timeZone: ZONE,
    }).format(new Date(dueAt));
    expect(await breachLine.locator('span').textContent()).toMatch(
      new RegExp(`^First response SLA breached — due ${dueShown}, [34] min ago$`),
    );
    const failedLine = activity.locator('li[data-action="delivery_failed"]');
    expect(await failedLine.locator('span').textContent()).toBe(
      `Webhook alert of a breach to http://${new URL(receiver.urlOf('/')).host}/…wxyz failed for good: the receiver answered HTTP 404 (no retry can succeed)`,
    );
    expect(await activity.textContent()).not.toContain('SECRET');
    await browser.screenshot('ticket-day-01-breach-and-failed-delivery');
  });

  it('"Show older comments" and "Show earlier activity" load the older pages, in order, without duplicates', async () => {
    const created = await stega.api<{ id: number }>('POST', '/api/tickets', {
      subject: 'A long thread',
      requester_name: 'Rita Requester',
      requester_email: 'rita@example.test',
    });
    const ticketId = created.body.id;
    const bodies: string[] = [];
    // 70 comments: the ticket brings the newest 8, then two older pages (50 and 12); the
    // activity (created, 70 comments, …) is more than the detail's newest 50 entries
    for (let i = 1; i <= 70; i++) {
      const body = `Comment number ${i}`;
      await comment(ticketId, body);
      bodies.push(body);
    }
    const allActivity = await activityOf(ticketId);
    expect(allActivity.length).toBeGreaterThan(50);

    await page.goto(`${stega.url}/tickets/${ticketId}`);
    const thread = page.getByRole('list', { name: 'Thread, newest first' });
    const shown = () =>
      thread.locator('li.reply .comment-body, li.note .comment-body').allTextContents();
    await expect.poll(shown).toEqual(bodies.slice(62).reverse());
    const older = page.getByRole('button', { name: /^Show older comments/ });
    expect(await older.textContent()).toBe('Show older comments (62 more)');
    await older.click();
    await expect.poll(shown).toEqual(bodies.slice(12).reverse());
    expect(await older.textContent()).toBe('Show older comments (12 more)');
    await older.click();
    await expect.poll(shown).toEqual([...bodies].reverse());
    await expect.poll(() => older.count()).toBe(0);

    const entries = page.locator('ol.activity > li');
    await expect.poll(() => entries.count()).toBe(50);
    await page.getByRole('button', { name: 'Show earlier activity' }).click();
    await expect.poll(() => entries.count()).toBe(allActivity.length);
    await expect
      .poll(() => page.getByRole('button', { name: 'Show earlier activity' }).count())
      .toBe(0);
    // newest first, each once (the count above): the oldest is the ticket's creation
    const texts = await entries.locator('span').allTextContents();
    expect(texts.at(-1)).toMatch(/created the ticket/);
    const times = await entries
      .locator('time')
      .evaluateAll((nodes) => nodes.map((n) => Date.parse(n.getAttribute('datetime') ?? '')));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('the tickets list’s next-reply column shows when the reply is due, and the breach once it is late', async () => {
    const calendar = await stega.api<{ id: number }>('POST', '/api/calendars', {
      name: 'always on',
      time_zone: 'UTC',
      always_open: true,
    });
    const policy = await stega.api<{ id: number }>('POST', '/api/sla-policies', {
      priority: 'high',
      requester_org: 'Next Reply Co',
      first_response_minutes: 60,
      resolution_minutes: 600,
      next_reply_minutes: 30,
      calendar_id: calendar.body.id,
    });
    expect(policy.status).toBe(201);
    const ticketFor = async (subject: string) => {
      const created = await stega.api<{ id: number }>('POST', '/api/tickets', {
        subject,
        requester_name: 'Nadia',
        requester_email: 'nadia@next.test',
        requester_org: 'Next Reply Co',
        priority: 'high',
      });
      const me = await stega.api<{ items: { id: number; name: string }[] }>('GET', '/api/agents');
      const kiran = me.body.items.find((a) => a.name === 'Kiran Reader')?.id;
      // the agent answers, the customer answers back: the ticket waits on the agent's next reply
      const first = await stega.api('POST', `/api/tickets/${created.body.id}/comments`, {
        body: 'Looking into it.',
        agent_id: kiran,
      });
      expect(first.status).toBe(201);
      await comment(created.body.id, 'Any news?', true);
      return created.body.id;
    };
    const waiting = await ticketFor('Waiting on our reply');
    const late = await ticketFor('Our reply is late');
    // the late one's reply fell due 5 minutes ago (moved in the database), and the detector saw it
    await pool.query(
      `update stega.sla_clocks set due_at = now() - interval '5 minutes',
                                   started_at = now() - interval '35 minutes'
        where ticket_id = $1 and kind = 'next_reply'`,
      [late],
    );
    expect((await detectBreaches()).map((b) => b.ticketId)).toContain(late);

    const detail = await stega.api<{ clocks: { kind: string; due_at: string }[] }>(
      'GET',
      `/api/tickets/${waiting}`,
    );
    const nextReplyDue = detail.body.clocks.find((c) => c.kind === 'next_reply')?.due_at;
    expect(nextReplyDue).toBeDefined();
    await page.goto(`${stega.url}/tickets`);
    const header = page.getByRole('columnheader', { name: 'Next reply' });
    await header.waitFor();
    const column = await header.evaluate((th) =>
      Array.from(th.parentElement?.children ?? []).indexOf(th),
    );
    const cellOf = (id: number) =>
      page.locator(`tr:has(a[href="/tickets/${id}"]) > td`).nth(column);

    const running = cellOf(waiting);
    await expect.poll(() => running.textContent()).toMatch(/^Next reply: \d+m \d\ds left/);
    const dueShown = new Intl.DateTimeFormat('en-GB', {
      hour: '2-digit',
      minute: '2-digit',
      timeZone: ZONE,
    }).format(new Date(String(nextReplyDue)));
    expect(await running.textContent()).toContain(`due ${dueShown}`);

    const overdue = cellOf(late);
    await expect.poll(() => overdue.textContent()).toMatch(/^Next reply: overdue [5-9]m \d\ds/);
    expect(await overdue.locator('.countdown').getAttribute('class')).toContain('breached');
    await browser.screenshot('ticket-day-02-next-reply-column');
  });

  it('the ticket page fits a phone: 390 px wide, nothing overflows sideways, and it stays short', async () => {
    // a ticket with a normal amount of content: a description, 12 comments, a breach, an alert
    // that failed for good, its clocks and their activity
    receiver.script({ status: 410, body: 'gone' });
    const ticketId = await breachedTicket({
      in_app: false,
      webhooks: [{ url: receiver.urlOf('/hooks/phone') }],
    });
    await pool.query(
      `update stega.tickets set description = $2, subject = 'Printer on the third floor prints blank pages' where id = $1`,
      [
        ticketId,
        'Since this morning every job sent to the printer by the kitchen comes out blank. We tried another tray and restarted it twice.',
      ],
    );
    await detectBreaches();
    await eventually(
      async () => (await activityOf(ticketId)).some((a) => a.action === 'delivery_failed'),
      'the failed webhook in the activity',
      PROCESS_PATIENCE,
    );
    for (let i = 1; i <= 12; i++) {
      await comment(
        ticketId,
        `Update ${i}: we checked the toner, the drum and the driver settings; the next step is a firmware update, which needs the vendor's tool.`,
        i % 3 === 0,
      );
    }

    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${stega.url}/tickets/${ticketId}`);
      await page.getByRole('list', { name: 'Thread, newest first' }).waitFor();
      await page.locator('li[data-action="delivery_failed"]').waitFor({ state: 'attached' });
      // (in the page, as a string: no DOM types here)
      const size = (await page.evaluate(
        '({ height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth })',
      )) as { height: number; width: number };
      await browser.screenshot('ticket-day-03-phone');
      // nothing wider than the phone: no sideways scrolling
      expect(size.width).toBeLessThanOrEqual(390);
      // three screens of an 844 px phone at most (it was 7,239 px): the header, the reply box and
      // the newest comments first; the side panels folded
      expect(size.height).toBeLessThanOrEqual(2500);
      // what is folded is one tap away
      const activity = page.getByRole('region', { name: 'Activity' });
      await activity.getByText('Activity').first().click();
      await activity.locator('li[data-action="sla_breached"]').waitFor();
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
