import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import {
  startAnyReceiver,
  startPagerDutyReceiver,
  startSlackReceiver,
} from '../../../../test-support/service-receivers.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

const KEY = 'Ui0123456789abcdefABCDEF0123ab9z';

/**
 * The policy form's chat and on-call fields in a real browser against `stega start`: a Slack
 * channel and a PagerDuty service added in the form, the secrets entered masked, an alert
 * delivered to both, and the ticket page naming each channel and delivery; the same fields on
 * an escalation level of the Escalations page, masked to an agent and kept through an edit.
 */
describe('chat and on-call channels in the browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 2);
  const slack = await startSlackReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  const brokenHook = await startAnyReceiver();
  brokenHook.down({ status: 500, body: 'broken' });
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SLA_WORKERS: '1',
    PAGERDUTY_EVENTS_URL: pagerDuty.urlOf('/v2/enqueue'),
  });
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
    await signIn(page, stega);
  });
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
    await Promise.all([pool.end(), slack.stop(), pagerDuty.stop(), brokenHook.stop()]);
  });

  it('adds a Slack channel and a PagerDuty service in the policy form, and shows their deliveries on the ticket', async () => {
    const calendars = await stega.api<{ items: { id: number }[] }>('GET', '/api/calendars');
    const created = await stega.api<{ id: number }>('POST', '/api/sla-policies', {
      name: 'Chat policy',
      priority: 'urgent',
      requester_org: 'Chat UI Co',
      first_response_minutes: 5,
      resolution_minutes: 240,
      calendar_id: calendars.body.items[0]?.id,
      alert_channels: {
        in_app: false,
        email: ['oncall@chat.test'],
        retry: { delays_seconds: [1] },
      },
    });
    expect(created.status).toBe(201);
    const url = `/api/sla-policies/${created.body.id}`;

    await page.goto(`${stega.url}/policies/${created.body.id}`);
    await expect
      .poll(() => page.getByLabel('Name', { exact: true }).inputValue())
      .toBe('Chat policy');
    await page.getByRole('button', { name: 'Add a Slack channel' }).click();
    await page.getByLabel('Slack channel 1 name').fill('#support-escalations');
    const slackUrl = page.getByLabel('Slack channel 1 webhook URL');
    await slackUrl.fill(slack.urlOf('/services/T1/B1/ui-secret'));
    // the webhook URL is a secret: typed into a masked field
    expect(await slackUrl.getAttribute('type')).toBe('password');
    await page.getByRole('button', { name: 'Add a PagerDuty service' }).click();
    await page.getByLabel('PagerDuty service 1 name').fill('Helpdesk on-call');
    const key = page.getByLabel('PagerDuty service 1 integration key');
    expect(await key.getAttribute('type')).toBe('password');
    // a wrong key is refused, the message next to its field
    await key.fill('not-a-key');
    await page.getByRole('button', { name: 'Save policy' }).click();
    // the refusal arrives with the API's answer: wait for the field to name its error
    await expect
      .poll(async () => ((await key.getAttribute('aria-describedby')) ?? '').includes('-error'))
      .toBe(true);
    const describedBy = (await key.getAttribute('aria-describedby')) ?? '';
    const errorId = describedBy.split(' ').find((id) => id.endsWith('-error'));
    expect(errorId).toBeTruthy();
    expect(await page.locator(`#${errorId}`).textContent()).toContain(
      '32-character integration key',
    );
    await key.fill(KEY);
    await page.getByLabel('PagerDuty service 1 severity of a breach').selectOption('error');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved.').waitFor();

    const stored = await stega.api<{ alert_channels: Record<string, unknown> }>('GET', url);
    expect(stored.body.alert_channels).toMatchObject({
      email: ['oncall@chat.test'],
      slack: [{ url: slack.urlOf('/services/T1/B1/ui-secret'), label: '#support-escalations' }],
      teams: [],
      pagerduty: [{ routing_key: KEY, label: 'Helpdesk on-call', breach_severity: 'error' }],
      // the form changed only the chat channels: the retry schedule stays
      retry: { delays_seconds: [1] },
    });
    // the list names the channels by their names, never by their URLs
    await page.goto(`${stega.url}/policies`);
    const row = page.getByRole('row', { name: /Chat policy/ });
    await expect.poll(() => row.textContent()).toContain('Slack #support-escalations');
    expect(await row.textContent()).toContain('PagerDuty Helpdesk on-call');
    expect(await row.textContent()).not.toContain('ui-secret');

    // a ticket under it breaches: Slack and PagerDuty each get the alert once
    const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
      subject: 'Chat UI ticket',
      requester_name: 'Rita',
      requester_email: 'rita@chat.test',
      requester_org: 'Chat UI Co',
      priority: 'urgent',
    });
    await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(Date.now() + 10 * 60_000), 100));
    await pool.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
    await slack.until((calls) => calls.length >= 1);
    await pagerDuty.until((calls) => calls.length >= 1);
    // the outcomes are recorded after the answers: wait for both rows, as the page shows them
    await expect
      .poll(
        async () =>
          (
            await pool.query(
              `select count(*)::int as n from stega.alert_deliveries
                where ticket_id = $1 and channel in ('slack', 'pagerduty') and status = 'delivered'`,
              [ticket.body.id],
            )
          ).rows[0]?.n,
        { timeout: 20_000 },
      )
      .toBe(2);

    await page.goto(`${stega.url}/tickets/${ticket.body.id}`);
    const slackRow = page.locator('tr[data-channel="slack"]');
    await slackRow.waitFor();
    expect(await slackRow.locator('td[data-label="Channel"]').textContent()).toBe('Slack');
    const pageRow = page.locator('tr[data-channel="pagerduty"]');
    expect(await pageRow.locator('td[data-label="Channel"]').textContent()).toBe('PagerDuty');
    expect(await pageRow.locator('td[data-label="Recipient"]').textContent()).toBe(
      'Trigger · integration key …ab9z',
    );
    expect(await pageRow.getAttribute('data-state')).toBe('delivered');
    expect(await slackRow.getAttribute('data-state')).toBe('delivered');
  });

  it('sets an escalation level’s Slack channel and PagerDuty service on the Escalations page, and keeps them when only a delay is edited', async () => {
    const slackUrl = slack.urlOf('/services/T1/B1/level-secret');
    await page.goto(`${stega.url}/escalation-policies`);
    const form = page.getByRole('form', { name: 'New escalation policy' });
    await form.getByLabel('Policy name').fill('Chat climb');
    // level 0 (the assignee, at the breach) posts to #support in Slack
    await form.getByRole('button', { name: 'Add a Slack channel to level 0' }).click();
    await form.getByLabel('Level 0 Slack channel 1 name').fill('#support');
    const urlField = form.getByLabel('Level 0 Slack channel 1 webhook URL');
    await urlField.fill(slackUrl);
    expect(await urlField.getAttribute('type')).toBe('password');
    // level 1, 30 minutes later, pages the on-call PagerDuty service
    await form.getByRole('button', { name: 'Add a level' }).click();
    await form.getByRole('button', { name: 'Add a PagerDuty service to level 1' }).click();
    await form.getByLabel('Level 1 PagerDuty service 1 name').fill('Helpdesk on-call');
    const key = form.getByLabel('Level 1 PagerDuty service 1 integration key');
    expect(await key.getAttribute('type')).toBe('password');
    await key.fill('not-a-key');
    await form.getByRole('button', { name: 'Add escalation policy' }).click();
    // the API's refusal sits next to the key's field, in words
    await expect
      .poll(async () => ((await key.getAttribute('aria-describedby')) ?? '').includes('-error'))
      .toBe(true);
    const errorId = ((await key.getAttribute('aria-describedby')) ?? '')
      .split(' ')
      .find((id) => id.endsWith('-error'));
    expect(await page.locator(`#${errorId}`).textContent()).toContain(
      '32-character integration key',
    );
    await key.fill(KEY);
    await form.getByLabel('Level 1 PagerDuty service 1 severity of a breach').selectOption('error');
    await form.getByRole('button', { name: 'Add escalation policy' }).click();

    const card = page.getByRole('article', { name: 'Escalation policy Chat climb' });
    await card.waitFor();
    expect(await card.textContent()).toContain(
      'Level 0: at the breach → the assignee, Slack #support',
    );
    expect(await card.textContent()).toContain('PagerDuty Helpdesk on-call');
    expect(await card.textContent()).not.toContain('level-secret');
    type Stored = {
      id: number;
      name: string;
      levels: { delay_minutes: number; targets: { channels: Record<string, unknown> } }[];
    };
    const list = await stega.api<{ items: Stored[] }>('GET', '/api/escalation-policies');
    const created = list.body.items.find((p) => p.name === 'Chat climb');
    if (!created) throw new Error('the escalation policy was not created');
    const url = `/api/escalation-policies/${created.id}`;
    const channels = [
      { slack: [{ url: slackUrl, label: '#support' }], teams: [], pagerduty: [] },
      {
        slack: [],
        teams: [],
        pagerduty: [{ routing_key: KEY, label: 'Helpdesk on-call', breach_severity: 'error' }],
      },
    ];
    expect(created.levels.map((l) => l.targets.channels)).toMatchObject(channels);

    // after a reload an admin gets the secrets back, in masked fields
    await page.reload();
    await card.getByRole('button', { name: 'Edit Chat climb' }).click();
    const edit = page.getByRole('form', { name: 'Edit escalation policy Chat climb' });
    const keptUrl = edit.getByLabel('Level 0 Slack channel 1 webhook URL');
    expect(await keptUrl.inputValue()).toBe(slackUrl);
    expect(await keptUrl.getAttribute('type')).toBe('password');
    expect(await edit.getByLabel('Level 0 Slack channel 1 name').inputValue()).toBe('#support');
    const keptKey = edit.getByLabel('Level 1 PagerDuty service 1 integration key');
    expect(await keptKey.getAttribute('type')).toBe('password');

    // an agent sees the level read-only, the URL and the key masked (… and their last 4)
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Cleo Chat',
      email: 'cleo@chat.test',
    });
    const token = await stega.api<{ token: string }>('POST', '/api/tokens', {
      name: 'cleo laptop',
      role: 'agent',
      agent_id: agent.body.id,
    });
    const agentPage = await browser.context.newPage();
    try {
      await signIn(agentPage, { url: stega.url, token: token.body.token });
      await agentPage.goto(`${stega.url}/escalation-policies`);
      await agentPage.getByRole('button', { name: 'View Chat climb' }).click();
      const view = agentPage.getByRole('form', { name: 'View escalation policy Chat climb' });
      const maskedUrl = view.getByLabel('Level 0 Slack channel 1 webhook URL');
      expect(await maskedUrl.inputValue()).toBe(`${new URL(slackUrl).origin}/…cret`);
      expect(await maskedUrl.isDisabled()).toBe(true);
      expect(
        await view.getByLabel('Level 1 PagerDuty service 1 integration key').inputValue(),
      ).toBe(`…${KEY.slice(-4)}`);
      expect(await view.getByRole('button', { name: /^Save/ }).count()).toBe(0);
      await browser.screenshot('chat-channels-02-escalation-read-only', agentPage);
    } finally {
      await agentPage.close();
    }

    // the admin edits only level 1's delay: every channel stays as it was
    await edit.getByLabel('Level 1 delay (minutes after the breach)').fill('45');
    await browser.screenshot('chat-channels-01-escalation-levels');
    await edit.getByRole('button', { name: 'Save escalation policy' }).click();
    await card.getByText('Level 1: 45 min after the breach').waitFor();
    const stored = await stega.api<Stored>('GET', url);
    expect(stored.body.levels.map((l) => l.delay_minutes)).toEqual([0, 45]);
    expect(stored.body.levels.map((l) => l.targets.channels)).toMatchObject(channels);
  });

  it('sets a fallback Slack channel on the policy form, shows it after a reload, and names it on the ticket when the webhook fails', async () => {
    const calendars = await stega.api<{ items: { id: number }[] }>('GET', '/api/calendars');
    const primarySlack = slack.urlOf('/services/T1/B1/primary-secret');
    const fallbackSlack = slack.urlOf('/services/T1/B1/fallback-secret');
    const created = await stega.api<{ id: number }>('POST', '/api/sla-policies', {
      name: 'Fallback chat policy',
      priority: 'high',
      requester_org: 'Fallback UI Co',
      first_response_minutes: 5,
      resolution_minutes: 240,
      calendar_id: calendars.body.items[0]?.id,
      alert_channels: {
        in_app: false,
        slack: [{ url: primarySlack, label: '#support' }],
        webhooks: [{ url: brokenHook.urlOf('/alerts') }],
      },
    });
    expect(created.status).toBe(201);
    const url = `/api/sla-policies/${created.body.id}`;
    await page.goto(`${stega.url}${url.replace('/api/sla-policies', '/policies')}`);
    await expect
      .poll(() => page.getByLabel('Name', { exact: true }).inputValue())
      .toBe('Fallback chat policy');
    await page.getByLabel(/alert these too/).check();
    await page.getByLabel('Fall back after (minutes)').fill('10');
    await page.getByRole('button', { name: 'Add a Slack channel to fallback' }).click();
    await page.getByLabel('Fallback Slack channel 1 name', { exact: true }).fill('#support-leads');
    const urlField = page.getByLabel('Fallback Slack channel 1 webhook URL', { exact: true });
    expect(await urlField.getAttribute('type')).toBe('password');
    // a URL that is no URL is refused next to its field
    await urlField.fill('hooks.slack.com/services/nope');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect
      .poll(async () =>
        ((await urlField.getAttribute('aria-describedby')) ?? '').includes('-error'),
      )
      .toBe(true);
    const errorId = ((await urlField.getAttribute('aria-describedby')) ?? '')
      .split(' ')
      .find((id) => id.endsWith('-error'));
    expect(await page.locator(`#${errorId}`).textContent()).toContain('must be an http(s) URL');
    await urlField.fill(fallbackSlack);
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved.').waitFor();

    const stored = await stega.api<{ alert_channels: Record<string, unknown> }>('GET', url);
    expect(stored.body.alert_channels).toMatchObject({
      slack: [{ url: primarySlack, label: '#support' }],
      fallback: {
        after_minutes: 10,
        slack: [{ url: fallbackSlack, label: '#support-leads' }],
        teams: [],
        pagerduty: [],
      },
    });

    await page.reload();
    const name = page.getByLabel('Fallback Slack channel 1 name', { exact: true });
    await expect.poll(() => name.inputValue()).toBe('#support-leads');
    expect(
      await page.getByLabel('Fallback Slack channel 1 webhook URL', { exact: true }).inputValue(),
    ).toBe(fallbackSlack);
    expect(await page.getByLabel('Fall back after (minutes)').inputValue()).toBe('10');
    // the policy's own Slack channel is where it was
    expect(await page.getByLabel('Slack channel 1 name', { exact: true }).inputValue()).toBe(
      '#support',
    );
    // the list names the fallback's channel by its name
    await page.goto(`${stega.url}/policies`);
    const row = page.getByRole('row', { name: /Fallback chat policy/ });
    await expect.poll(() => row.textContent()).toContain('to Slack #support-leads');
    expect(await row.textContent()).not.toContain('fallback-secret');

    // a ticket under it breaches; the webhook answers 500 for good, so at the fallback's
    // deadline (moved to now rather than waited for) the fallback Slack channel gets it once
    const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
      subject: 'Fallback UI ticket',
      requester_name: 'Rita',
      requester_email: 'rita@fallback.test',
      requester_org: 'Fallback UI Co',
      priority: 'high',
    });
    await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(Date.now() + 10 * 60_000), 100));
    await pool.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
    const rowState = (fallback: boolean) =>
      pool.query(
        `select status from stega.alert_deliveries
          where ticket_id = $1 and channel = 'slack' and fallback = $2`,
        [ticket.body.id, fallback],
      );
    await expect
      .poll(async () => (await rowState(true)).rows[0]?.status, { timeout: 20_000 })
      .toBe('scheduled');
    await pool.query(
      `update stega.alert_deliveries set next_attempt_at = now()
        where ticket_id = $1 and status = 'scheduled'`,
      [ticket.body.id],
    );
    await expect
      .poll(async () => (await rowState(true)).rows[0]?.status, { timeout: 20_000 })
      .toBe('delivered');
    expect(slack.calls.filter((c) => c.path === '/services/T1/B1/fallback-secret')).toHaveLength(1);
    await page.goto(`${stega.url}/tickets/${ticket.body.id}`);
    const webhookRow = page.locator('tr[data-channel="webhook"]');
    await expect
      .poll(() => webhookRow.textContent(), { timeout: 20_000 })
      .toContain(`fell back to Slack ${fallbackSlack}`);
  });
});
