import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, type TestBrowser } from './browser.js';
import { startHoldingReceiver } from './holding-webhook.js';

interface QueueBody {
  consumers: {
    name: string;
    subconsumers: { name: string; current_batch: number | null }[];
  }[];
}

/**
 * The web UI in Chromium (see browser.ts) against a real `stega start` (web, ticker, jobs,
 * notification-worker and two sla-breach-worker processes), a real SMTP server and webhook
 * receiver. Breaches are produced on a moved clock, as the detector would produce them later.
 */
describe('web UI in a browser against stega start', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  const hook = await startHoldingReceiver();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    SLA_WORKERS: '2',
    // a killed worker's batch is taken over after 5 s; live ones send heartbeats every ~1.7 s
    SLA_DEAD_INTERVAL_SECONDS: '5',
    // the held webhook call must outlast the takeover
    WEBHOOK_TIMEOUT_MS: '90000',
    // one alert in delivery per worker: while the held call has it, the next alert of the
    // batch waits for it, so the worker stays in the middle of its batch (a batch is
    // otherwise acked as soon as its alerts are recorded)
    SLA_DELIVERY_CONCURRENCY: '1',
  });
  let browser: TestBrowser;
  let page: Page;
  let ticketId = 0;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await Promise.all([pool.end(), smtp.stop(), hook.stop()]);
  });

  /** Moves the detector's clock: records every breach due by `at`, then closes a tick. */
  async function detectBreachesAt(at: Date) {
    const recorded = await inTransaction(pool, (tx) => breachRecordDue(tx, at, 100));
    await pool.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
    return recorded;
  }

  async function members(): Promise<{ name: string; current_batch: number | null }[]> {
    const queue = await stega.api<QueueBody>('GET', `/api/queues/${NOTIFICATIONS_QUEUE}`);
    return queue.body.consumers.find((c) => c.name === SLA_GROUP)?.subconsumers ?? [];
  }

  /** The text of a field's error, found from the input through aria-describedby. */
  async function errorOf(input: Locator): Promise<string> {
    await expect.poll(() => input.getAttribute('aria-invalid')).toBe('true');
    const ids = (await input.getAttribute('aria-describedby')) ?? '';
    const errorId = ids.split(' ').find((id) => id.endsWith('-error'));
    expect(errorId).toBeDefined();
    return (await page.locator(`#${errorId}`).textContent()) ?? '';
  }

  async function countdownSeconds(locator: Locator): Promise<number> {
    const text = (await locator.textContent()) ?? '';
    const match = /(?:(\d+)h )?(?:(\d+)m )?(\d+)s left/.exec(text);
    if (!match) throw new Error(`not a running countdown: ${text}`);
    return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3]);
  }

  it('signs in with an API token, showing where the admin token comes from', async () => {
    await page.goto(`${stega.url}/tickets`);
    await expect
      .poll(() => page.getByRole('heading', { name: 'Sign in to Stega' }).count())
      .toBe(1);
    const hint = await page.locator('.sign-in-card').textContent();
    expect(hint).toContain('STEGA_ADMIN_TOKEN');
    // the data directory may be elsewhere (this test's is): no path that may be wrong
    expect(hint).toContain('admin-token');
    expect(hint).toContain('STEGA_DATA_DIR');
    expect(hint).not.toContain('.stega/admin-token');
    await browser.screenshot('01-sign-in');

    await page.getByText('Sign in with an API token instead').click();
    const token = page.getByLabel('API token');
    await token.fill('not-a-valid-token');
    await page.getByRole('button', { name: 'Sign in with the token' }).click();
    expect(await errorOf(token)).toContain('not valid');

    await token.fill(stega.token);
    await token.press('Enter');
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('stega.token')")).toBe(stega.token);
    expect(await page.getByRole('navigation', { name: 'Main' }).textContent()).toContain(
      'Operations',
    );
  });

  it('shows validation errors next to policy and calendar fields, then saves the policy', async () => {
    const calendars = await stega.api<{
      items: { id: number; name: string; always_open: boolean }[];
    }>('GET', '/api/calendars');
    const always = calendars.body.items.find((c) => c.always_open);
    expect(always).toBeDefined();

    await page.getByRole('link', { name: 'SLA policies', exact: true }).click();
    await page.getByRole('link', { name: 'New policy', exact: true }).click();
    await page.getByRole('heading', { name: 'New SLA policy' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('UI high');
    await page.getByLabel('Priority').selectOption('high');
    await page.getByLabel('Requester organisation').fill('UI Co');
    const firstResponse = page.getByLabel('First response target (business minutes)');
    await firstResponse.fill('0');
    await page.getByLabel('Business calendar').selectOption(String(always?.id));
    await page.getByLabel('Email recipients').fill('oncall@ui.test\nnot-an-address');
    await page.getByRole('button', { name: 'Add a webhook' }).click();
    await page.getByLabel('Webhook 1 URL').fill(hook.url('/fast'));
    await page.getByRole('button', { name: 'Create policy' }).click();

    expect(await errorOf(firstResponse)).toContain('at least 1 minute');
    expect(await errorOf(page.getByLabel('Email recipients'))).toContain('address 2');
    // the summary took the focus and links to the fields
    expect(await page.evaluate('document.activeElement?.className')).toContain('error-summary');
    await browser.screenshot('02-policy-validation');

    await firstResponse.fill('2');
    await page.getByLabel('Email recipients').fill('oncall@ui.test');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.waitForURL(/\/policies\/\d+$/);
    await page.getByRole('heading', { name: 'UI high' }).waitFor();
    expect(await firstResponse.getAttribute('aria-invalid')).toBeNull();

    // a calendar whose interval ends before it starts: the error sits under that "to" field
    await page.getByRole('link', { name: 'Calendars', exact: true }).click();
    await page.getByRole('link', { name: 'New calendar', exact: true }).click();
    await page.getByLabel('Name', { exact: true }).fill('UI office');
    await page.getByLabel('Time zone').fill('Europe/Lisbon');
    const mondayEnd = page.getByLabel('Monday 1 to');
    await mondayEnd.fill('08:00');
    await page.getByRole('button', { name: 'Add a holiday' }).click();
    await page.getByLabel('Holiday 1 date').fill('2026-02-30');
    await page.getByRole('button', { name: 'Create calendar' }).click();
    expect(await errorOf(mondayEnd)).toContain('must be after start');
    expect(await errorOf(page.getByLabel('Holiday 1 date'))).toContain('not a calendar date');
    await browser.screenshot('03-calendar-validation');
    await mondayEnd.fill('17:00');
    await page.getByLabel('Holiday 1 date').fill('2026-12-25');
    await page.getByRole('button', { name: 'Create calendar' }).click();
    await page.waitForURL(/\/calendars\/\d+$/);
    await page.getByRole('heading', { name: 'UI office' }).waitFor();
  });

  it('creates a ticket and watches its SLA countdown tick', async () => {
    await page.getByRole('link', { name: 'Tickets', exact: true }).click();
    await page.getByRole('link', { name: 'New ticket', exact: true }).click();
    await page.getByRole('heading', { name: 'New ticket' }).waitFor();
    await page.getByRole('button', { name: 'Create ticket' }).click();
    // an empty form: the API names the required fields
    expect(await errorOf(page.getByLabel('Subject'))).not.toBe('');

    await page.getByLabel('Subject').fill('Printer on fire');
    await page.getByLabel('Description').fill('Smoke from tray 2.');
    await page.getByLabel('Requester name').fill('Rita Requester');
    await page.getByLabel('Requester email').fill('rita@ui-co.test');
    await page.getByLabel('Requester organisation').fill('UI Co');
    await page.getByLabel('Priority').selectOption('high');
    await page.getByRole('button', { name: 'Create ticket' }).click();
    await page.waitForURL(/\/tickets\/\d+$/);
    ticketId = Number(new URL(page.url()).pathname.split('/').pop());
    expect(ticketId).toBeGreaterThan(0);

    const countdown = page.locator('[data-clock="first_response"] [role="timer"]');
    await countdown.waitFor();
    const before = await countdownSeconds(countdown);
    expect(before).toBeGreaterThan(60);
    expect(before).toBeLessThanOrEqual(120);
    // it ticks without a reload
    await expect.poll(() => countdownSeconds(countdown), { timeout: 10_000 }).toBeLessThan(before);
    await browser.screenshot('04-ticket-new');

    await page.getByRole('link', { name: '← Tickets', exact: true }).click();
    const row = page.locator(`tr[data-ticket-id="${ticketId}"]`);
    await row.waitFor();
    const rowCountdown = row.locator('td[data-label="First response"] [role="timer"]');
    const listed = await countdownSeconds(rowCountdown);
    await expect
      .poll(() => countdownSeconds(rowCountdown), { timeout: 10_000 })
      .toBeLessThan(listed);
    await browser.screenshot('05-tickets');

    // the filters narrow the list (and live in the address)
    // click, not check(): the box follows the address, which changes a moment after the click
    await page.getByRole('checkbox', { name: 'High' }).click();
    await page.waitForURL(/priority=high/);
    await expect.poll(() => page.getByRole('checkbox', { name: 'High' }).isChecked()).toBe(true);
    await page.getByLabel('SLA', { exact: true }).selectOption('at_risk');
    await expect.poll(() => row.count()).toBe(0);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => row.count()).toBe(1);
  });

  it('shows the breach and each alert delivery with the replica that delivered it', async () => {
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    await page.locator('[data-clock="first_response"]').waitFor();
    const recorded = await detectBreachesAt(new Date(Date.now() + 3 * 60_000));
    expect(recorded.map((b) => b.ticketId)).toContain(ticketId);

    const breach = page.locator('li.breach[data-breach-id]');
    await breach.waitFor({ timeout: 30_000 });
    const breachId = await breach.getAttribute('data-breach-id');
    // each delivery once, in the alerts section: in-app, email, webhook
    const deliveries = page.locator(`table.deliveries tr[data-alert="breach-${breachId}"]`);
    await expect.poll(() => deliveries.count(), { timeout: 60_000 }).toBe(3);
    await expect
      .poll(() => deliveries.getByText('Delivered', { exact: true }).count(), { timeout: 60_000 })
      .toBe(3);
    expect(await page.locator('table.deliveries tbody tr').count()).toBe(3);
    const replicas = await deliveries.locator('td.replica').allTextContents();
    const names = (await members()).map((m) => m.name);
    expect(replicas.length).toBe(3);
    for (const replica of replicas) expect(names).toContain(replica.trim());
    expect(await page.locator('.badges').textContent()).toContain('Breached');
    expect(smtp.messages.some((m) => m.to.includes('oncall@ui.test'))).toBe(true);
    expect(hook.calls.filter((c) => c.path === '/fast')).toHaveLength(1);
    await browser.screenshot('06-ticket-breached');

    await page.getByRole('link', { name: '← Tickets', exact: true }).click();
    const row = page.locator(`tr[data-ticket-id="${ticketId}"]`);
    await expect.poll(() => row.locator('.sla-breached').count()).toBe(1);
  });

  it('pauses the resolution clock while the ticket waits on the customer', async () => {
    await page.goto(`${stega.url}/tickets/${ticketId}`);
    const clock = page.locator('[data-clock="resolution"]');
    await clock.waitFor();
    await page.getByRole('button', { name: 'Waiting', exact: true }).click();
    await page.getByText('Status changed to Waiting.').waitFor();
    await expect
      .poll(() => clock.locator('[role="timer"]').textContent())
      .toMatch(/paused, .* left/);
    expect(await clock.textContent()).toContain('paused since');
    await browser.screenshot('07-ticket-paused');
    await page.getByRole('button', { name: 'In progress', exact: true }).click();
    await page.getByText('Status changed to In progress.').waitFor();
    await expect
      .poll(() => clock.locator('[role="timer"]').textContent())
      .toMatch(/^Resolution: \d+h \d+m left$/);

    // edit: only the changed field is sent; the page shows it
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.getByRole('heading', { name: `Edit ticket #${ticketId}` }).waitFor();
    await page.getByLabel('Subject').fill('Printer on fire (tray 2)');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: /Printer on fire \(tray 2\)/ }).waitFor();
    expect(await page.locator('.activity').textContent()).toContain('Printer on fire (tray 2)');
  });

  it('replays a dead letter from the operations page', async () => {
    await pool.query(
      'select pgque.send($1, \'ticket.sla_breached\', \'{"version": 1, "ticket_id": "not a number"}\'::text)',
      [NOTIFICATIONS_QUEUE],
    );
    await pool.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);

    await page.getByRole('link', { name: 'Operations', exact: true }).click();
    await page.getByRole('heading', { name: 'Operations', level: 1 }).waitFor();
    const letter = page.locator('tr[data-dead-letter-id]').first();
    await letter.waitFor({ timeout: 60_000 });
    const id = Number(await letter.getAttribute('data-dead-letter-id'));
    expect(await letter.textContent()).toContain('ticket.sla_breached');
    await browser.screenshot('08-operations-dead-letter');

    await page.getByRole('button', { name: `Replay dead letter ${id}` }).click();
    const status = page.getByText(new RegExp(`Dead letter ${id} replayed as event \\d+`));
    await status.waitFor();
    await expect.poll(() => page.locator(`tr[data-dead-letter-id="${id}"]`).count()).toBe(0);
    const { rows } = await pool.query('select dl_id from pgque.dlq_inspect($1)', [
      NOTIFICATIONS_QUEUE,
    ]);
    expect(rows.map((r) => Number(r.dl_id))).not.toContain(id);
  });

  it('shows who holds a batch, and the takeover after that worker is killed', async () => {
    const policy = await stega.api<{ id: number }>('POST', '/api/sla-policies', {
      name: 'UI hold',
      priority: 'urgent',
      requester_org: 'Hold Co',
      first_response_minutes: 60,
      resolution_minutes: 600,
      calendar_id: (
        await stega.api<{ items: { id: number; always_open: boolean }[] }>('GET', '/api/calendars')
      ).body.items.find((c) => c.always_open)?.id,
      alert_channels: { in_app: true, email: [], webhooks: [{ url: hook.url('/hold') }] },
    });
    expect(policy.status).toBe(201);
    const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
      subject: 'Held delivery',
      requester_name: 'Hal',
      requester_email: 'hal@hold-co.test',
      requester_org: 'Hold Co',
      priority: 'urgent',
    });
    expect(ticket.status).toBe(201);
    const behind = await stega.api<{ id: number }>('POST', '/api/tickets', {
      subject: 'Held delivery, the next alert',
      requester_name: 'Hal',
      requester_email: 'hal@hold-co.test',
      requester_org: 'Hold Co',
      priority: 'urgent',
    });
    expect(behind.status).toBe(201);

    await page.goto(`${stega.url}/operations`);
    await page.getByRole('heading', { name: 'Operations', level: 1 }).waitFor();
    const recorded = await detectBreachesAt(new Date(Date.now() + 61 * 60_000));
    expect(recorded.map((b) => b.ticketId)).toEqual(
      expect.arrayContaining([ticket.body.id, behind.body.id]),
    );

    // one worker is now in the middle of its batch: one alert's call is held, the next waits
    await eventually(async () => hook.heldCount() === 1, 'the held webhook call', PROCESS_PATIENCE);
    let holder: { name: string; current_batch: number | null } | undefined;
    await eventually(
      async () => {
        holder = (await members()).find((m) => m.current_batch !== null);
        return holder !== undefined;
      },
      'the member holding the batch',
      PROCESS_PATIENCE,
    );
    const name = holder?.name ?? '';
    const holderRow = page.locator(`tr[data-subconsumer="${name}"]`);
    await expect
      .poll(() => holderRow.locator('td.batch').textContent(), { timeout: 10_000 })
      .toBe(`batch ${holder?.current_batch}`);
    await browser.screenshot('09-operations-batch-held');

    // the member name is hostname-pid; make sure that pid is an sla-breach-worker, then kill it
    const pid = Number(name.split('-').pop());
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('sla-breach-worker');
    process.kill(pid, 'SIGKILL');

    // another member takes the batch over after the dead interval and delivers the webhook
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select delivered_by from stega.alert_deliveries
            where ticket_id = $1 and channel = 'webhook' and status = 'delivered'`,
          [ticket.body.id],
        );
        return rows.length === 1 && rows[0]?.delivered_by !== name;
      },
      'the webhook delivered by another replica',
      { ...PROCESS_PATIENCE, timeoutMs: 90_000 },
    );
    // the killed member is not listed as an idle one: it is silent, stopped or frozen
    await expect
      .poll(() => holderRow.locator('td.batch').textContent(), { timeout: 60_000 })
      .toMatch(/^silent for .+: stopped or frozen/);
    // the operations page lists the takeover (pgque.get_coop_takeovers)
    const takeover = page.locator(`tr[data-old-subconsumer="${name}"]`);
    await takeover.waitFor({ timeout: 30_000 });
    const successor = await takeover.getAttribute('data-new-subconsumer');
    expect(successor).not.toBe(name);
    expect(await takeover.textContent()).toContain(`${holder?.current_batch} →`);
    await expect
      .poll(() => page.locator('#delivery-chart .legend').textContent(), { timeout: 15_000 })
      .toContain(name);
    await browser.screenshot('10-operations-takeover');

    await page.goto(`${stega.url}/tickets/${ticket.body.id}`);
    const webhookRow = page.locator('table.deliveries tr[data-channel="webhook"]');
    await webhookRow.waitFor();
    const by = (await webhookRow.locator('td.replica').textContent())?.trim();
    // any live replica may send it: the batch's successor, or the retry loop of another
    // one that saw the killed worker's claim orphaned (its session gone)
    expect(by).not.toBe(name);
    expect(by).toMatch(/\S/);
  });

  it('shows the weekly activity report with a chart', async () => {
    await page.getByRole('link', { name: 'Reports', exact: true }).click();
    await page.getByRole('heading', { name: 'Activity reports' }).waitFor();
    await page.getByRole('button', { name: 'Generate for the past week' }).click();
    await page.getByText(/Report job \d+ queued/).waitFor();
    const chart = page.locator('figure#assignee-chart');
    await chart.waitFor({ timeout: 60_000 });
    expect(await chart.locator('svg[role="img"] desc').textContent()).toContain('Unassigned');
    const figures = await page.locator('#report-title').locator('..').locator('..').textContent();
    expect(figures).toMatch(/Created\s*[1-9]/);
    await browser.screenshot('11-reports');
  });

  it('is usable by keyboard and on a narrow screen', async () => {
    await page.goto(`${stega.url}/tickets`);
    await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
    // the first Tab reaches the skip link, which moves the focus to the main landmark
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement?.id')).toBe('main');
    // every form control has a label
    for (const path of ['/tickets', '/tickets/new', '/policies/new', '/calendars/new']) {
      await page.goto(`${stega.url}${path}`);
      await page.locator('h1').first().waitFor();
      // inputs without a <label> and without aria-label (in the page, as a string: no DOM types here)
      const unlabelled =
        await page.evaluate(`[...document.querySelectorAll('input, select, textarea')]
        .filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label'))
        .map((el) => el.outerHTML)`);
      expect(unlabelled, path).toEqual([]);
    }
    // landmarks
    expect(await page.locator('header, nav, main, footer').count()).toBe(4);

    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, name] of [
      ['/tickets', '12-narrow-tickets'],
      [`/tickets/${ticketId}`, '13-narrow-ticket'],
      ['/operations', '14-narrow-operations'],
    ] as const) {
      await page.goto(`${stega.url}${path}`);
      await page.locator('h1').first().waitFor();
      await page.locator('main .panel, main table').first().waitFor();
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - window.innerWidth',
      );
      expect(overflow, `${path} scrolls sideways`).toBeLessThanOrEqual(0);
      await browser.screenshot(name);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('loaded everything from the app itself, without errors', async () => {
    const unexpected = browser.problems.filter(
      // answered on purpose: the wrong token on the sign-in page (401), the invalid forms (400)
      (p) => !/^Failed to load resource: the server responded with a status of 40[01] /.test(p),
    );
    expect(unexpected).toEqual([]);
  });
});
