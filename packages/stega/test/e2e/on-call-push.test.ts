import { describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startPushService, type TestSubscription } from '../../../../test-support/push-service.js';
import { type PagingNames, pagingBreach } from './paging-breach.js';
import { pushEnv, startPagingScene } from './paging-scene.js';

/** Rule delays are scaled like retries: 5 min → 30 s. */
const SCALE = 0.1;

type Row = Record<string, unknown>;

const PAGING_NAMES: PagingNames = {
  escalation: 'push',
  policy: 'push policy',
  org: 'Push',
  subject: 'Pushing',
  requesterEmail: 'req@push.test',
};

interface PagePayload {
  type: string;
  title: string;
  body: string;
  tag: string;
  ticket_id: number;
  url: string;
  urgency: string;
  actions: string[];
  ack_token: string | null;
}

/**
 * Web Push through the real processes: `stega start` (web server and an sla-breach-worker)
 * and a real push service on this machine (web-push-testing, its own process), which checks
 * each push's VAPID token and decrypts it with the subscription's private key, as a
 * browser's push service and the browser would. The test plays the browser: it subscribes
 * with Stega's VAPID key, registers the subscription, reads the test push and confirms its
 * code, then reads the pages and posts what the service worker's Acknowledge action posts.
 */
describe('end to end: web push reaches a paged person, and its Acknowledge action acknowledges', async () => {
  const push = await startPushService();
  const { pool, smtp, stega, stegaUrl, calendarId } = await startPagingScene(
    SCALE,
    pushEnv('mailto:oncall@push.test'),
    [push],
  );
  const key = await stega.api<{ public_key: string }>('GET', '/api/web-push/key');

  const decoded = async (subscription: TestSubscription) =>
    (await push.messages(subscription)).map((m) => JSON.parse(m) as Record<string, unknown>);

  /** An agent with a browser subscription registered and confirmed through the API. */
  async function person(name: string) {
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name,
      email: `${name.toLowerCase()}@push.test`,
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const id = agent.body.id;
    const subscription = await push.subscribe(key.body.public_key);
    const added = await stega.api<{ id: number; verified: boolean; address: string }>(
      'POST',
      `/api/agents/${id}/contact-methods`,
      {
        method: 'push',
        subscription: {
          endpoint: subscription.endpoint,
          keys: subscription.keys,
          expirationTime: null,
        },
        label: 'test browser',
      },
    );
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.verified).toBe(false);
    // listed masked: the push service's host, never the endpoint (a capability URL)
    expect(added.body.address).toBe(new URL(subscription.endpoint).host);
    // the test push arrived before the answer, decryptable, with its code
    const [test] = await decoded(subscription);
    expect(test).toMatchObject({ type: 'verify', contact_method_id: added.body.id });
    const code = String(test?.code);
    expect(code).toMatch(/^\d{6}$/);
    const wrong = await stega.api(
      'POST',
      `/api/agents/${id}/contact-methods/${added.body.id}/verify`,
      { code: code === '000000' ? '111111' : '000000' },
    );
    expect(wrong.status).toBe(400);
    const verified = await stega.api<{ verified: boolean }>(
      'POST',
      `/api/agents/${id}/contact-methods/${added.body.id}/verify`,
      { code },
    );
    expect(verified.body.verified).toBe(true);
    return { id, subscription, methodId: added.body.id };
  }

  async function rules(agentId: number, high: { method: string; delay_minutes: number }[]) {
    const set = await stega.api('PUT', `/api/agents/${agentId}/notification-rules`, { high });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  }

  /** A breach whose escalation level 0 pages `agentIds`; returns the ticket and its chain. */
  const page = (tag: string, agentIds: number[]) =>
    pagingBreach(stega, pool, calendarId, PAGING_NAMES, tag, agentIds);

  const stepRows = async (agentId: number) =>
    (
      await pool.query(
        `select id, channel, page_step, status, created_at, delivered_at, last_outcome
           from stega.alert_deliveries where page_agent_id = $1 order by id`,
        [agentId],
      )
    ).rows as Row[];

  const chainOf = async (escalationId: number) =>
    (
      await pool.query(
        'select stop_reason, acknowledged_via, acknowledged_by_agent_id from stega.escalations where id = $1',
        [escalationId],
      )
    ).rows[0];

  const acknowledge = (token: string) =>
    fetch(`${stegaUrl}/api/push/acknowledge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });

  it('push at 0: the breach arrives at the push service decryptable; Acknowledge acknowledges as that person (a forged token does not), and the later step is cancelled', async () => {
    const ana = await person('Ana');
    await rules(ana.id, [
      { method: 'push', delay_minutes: 0 },
      { method: 'email', delay_minutes: 5 },
    ]);
    const { ticketId, escalationId } = await page('ana', [ana.id]);
    const pushed = (await eventually(
      async () => (await decoded(ana.subscription)).find((m) => m.type === 'page'),
      'the page at the push service',
      PROCESS_PATIENCE,
    )) as unknown as PagePayload;
    expect(pushed.title).toContain(`Ticket #${ticketId}`);
    expect(pushed.title).toContain('Pushing ana');
    expect(pushed.ticket_id).toBe(ticketId);
    expect(pushed.url).toBe(`${stegaUrl}/tickets/${ticketId}`);
    expect(pushed.urgency).toBe('high');
    expect(pushed.actions).toEqual(['acknowledge', 'open']);
    const token = pushed.ack_token ?? '';
    expect(token).not.toBe('');
    // the push service answered before the worker recorded the outcome: wait for the record
    const [pushRow, emailRow] = (await eventually(
      async () => {
        const rows = (await stepRows(ana.id)) as [Row, Row];
        return rows[0]?.status === 'delivered' ? rows : null;
      },
      'the push step recorded delivered',
      PROCESS_PATIENCE,
    )) as [Row, Row];
    expect([pushRow.channel, pushRow.status]).toEqual(['push', 'delivered']);
    expect(emailRow.status).toBe('scheduled');

    // a token whose signature is not Stega's, and one naming another delivery: nothing happens
    const parts = token.split('.');
    const forged = [...parts.slice(0, 3), 'A'.repeat(parts[3]?.length ?? 43)].join('.');
    expect((await acknowledge(forged)).status).toBe(401);
    const otherRow = [String(Number(parts[0]) + 1000), ...parts.slice(1)].join('.');
    expect((await acknowledge(otherRow)).status).toBe(401);
    expect((await chainOf(escalationId))?.acknowledged_via).toBeNull();

    const answer = await acknowledge(token);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ acknowledged: true, ticket_id: ticketId });
    expect(await chainOf(escalationId)).toEqual({
      stop_reason: 'acknowledged',
      acknowledged_via: 'push',
      acknowledged_by_agent_id: ana.id,
    });
    // the email step was cancelled with the acknowledgement
    expect((await stepRows(ana.id))[1]?.status).toBe('cancelled');
    const activity = await pool.query(
      `select details from stega.ticket_activity where ticket_id = $1 and action = 'escalation_acknowledged'`,
      [ticketId],
    );
    expect(activity.rows[0]?.details).toMatchObject({
      via: 'push',
      acknowledged_by_agent_id: ana.id,
    });
    // the same action again is refused
    expect((await acknowledge(token)).status).toBe(409);
  });

  it('a push sent before its person was deactivated acknowledges nothing after it (403)', async () => {
    // before: the signed token still acknowledged the alert as the deactivated agent
    const dora = await person('Dora');
    await rules(dora.id, [{ method: 'push', delay_minutes: 0 }]);
    const { escalationId } = await page('dora', [dora.id]);
    const pushed = (await eventually(
      async () => (await decoded(dora.subscription)).find((m) => m.type === 'page'),
      'the page at the push service',
      PROCESS_PATIENCE,
    )) as unknown as PagePayload;
    const deactivated = await stega.api('POST', `/api/agents/${dora.id}/deactivate`);
    expect(deactivated.status, JSON.stringify(deactivated.body)).toBe(200);
    const answer = await acknowledge(pushed.ack_token ?? '');
    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ message: expect.stringMatching(/deactivated/) });
    expect((await chainOf(escalationId))?.acknowledged_via).toBeNull();
  });

  it('the push service answers 410: the method is marked gone and the next step goes at once', async () => {
    const bo = await person('Bo');
    await rules(bo.id, [
      { method: 'push', delay_minutes: 0 },
      { method: 'email', delay_minutes: 5 },
    ]);
    await push.expire(bo.subscription);
    await page('bo', [bo.id]);
    const rows = await eventually(
      async () => {
        const found = await stepRows(bo.id);
        return found[1]?.status === 'delivered' ? found : undefined;
      },
      'the email step',
      PROCESS_PATIENCE,
    );
    const [pushRow, emailRow] = rows as [Row, Row];
    expect(pushRow.status).toBe('failed_permanent');
    expect(pushRow.last_outcome).toMatchObject({ type: 'failed', kind: 'http', status: 410 });
    // pulled forward: sent before the instant its delay named (paged + 5 min, scaled)
    const scheduledFor = (emailRow.created_at as Date).getTime() + 5 * 60_000 * SCALE;
    expect((emailRow.delivered_at as Date).getTime()).toBeLessThan(scheduledFor);
    expect(smtp.messages.some((m) => m.to.includes('bo@push.test'))).toBe(true);

    const methods = await stega.api<{
      items: { id: number; verified: boolean; invalid_at: string | null; invalid_reason: string }[];
    }>('GET', `/api/agents/${bo.id}/contact-methods`);
    const method = methods.body.items.find((m) => m.id === bo.methodId);
    expect(method?.verified).toBe(false);
    expect(method?.invalid_at).not.toBeNull();
    expect(method?.invalid_reason).toContain('410');

    // the next page plans no push step to the gone subscription
    const before = (await stepRows(bo.id)).length;
    await page('bo again', [bo.id]);
    const next = await eventually(
      async () => {
        const found = (await stepRows(bo.id)).slice(before);
        return found.length > 0 ? found : undefined;
      },
      'the next page',
      PROCESS_PATIENCE,
    );
    expect(next.map((r) => r.channel)).toEqual(['email']);
  });

  it('refuses a bad subscription with a 400 naming the field: malformed keys, a private network', async () => {
    const agent = await stega.api<{ id: number }>('POST', '/api/agents', {
      name: 'Cy',
      email: 'cy@push.test',
    });
    const good = await push.subscribe(key.body.public_key);
    const badKey = await stega.api<{ issues?: { path: string }[] }>(
      'POST',
      `/api/agents/${agent.body.id}/contact-methods`,
      {
        method: 'push',
        subscription: { endpoint: good.endpoint, keys: { ...good.keys, p256dh: 'xyz' } },
      },
    );
    expect(badKey.status).toBe(400);
    expect(badKey.body.issues?.map((i) => i.path)).toContain('subscription.keys.p256dh');
    const privateNet = await stega.api<{ issues?: { path: string; message: string }[] }>(
      'POST',
      `/api/agents/${agent.body.id}/contact-methods`,
      { method: 'push', subscription: { endpoint: 'https://10.1.2.3/push/abc', keys: good.keys } },
    );
    expect(privateNet.status).toBe(400);
    expect(privateNet.body.issues?.[0]?.path).toBe('subscription.endpoint');
    expect(privateNet.body.issues?.[0]?.message).toContain('private');
  });
});
