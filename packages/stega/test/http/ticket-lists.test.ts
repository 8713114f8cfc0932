import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';

/** The lists' orderings, search, views, keyset pages and the "nothing changed" answer. */
describe('ticket lists: sort, search, views, cursor, ETag', async () => {
  const t = await startTestApp('2026-04-01T09:00:00Z');
  let agentId: number;
  let agentToken: string;
  const ids: Record<string, number> = {};

  const create = async (key: string, payload: Record<string, unknown>) => {
    const response = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: { requester_name: 'Rui Requester', requester_email: 'rui@example.test', ...payload },
    });
    expect(response.status).toBe(201);
    ids[key] = response.body.id;
    t.clock.set(new Date(t.clock.now().getTime() + 60_000).toISOString());
  };
  const list = async (query: string, token?: string) => {
    const options = { method: 'GET' as const, url: `/api/tickets?${query}` };
    const response = token ? await t.as(token, options) : await t.admin(options);
    expect(response.status).toBe(200);
    return response.body;
  };
  const order = (body: any) => body.items.map((i: any) => i.id);
  /** The earliest due instant of a running clock, as the ticket page shows the clocks. */
  const nextDue = async (id: number) => {
    const detail = await t.admin({ method: 'GET', url: `/api/tickets/${id}` });
    const running = detail.body.clocks.filter((c: any) => c.state === 'running');
    return running.length === 0
      ? Infinity
      : Math.min(...running.map((c: any) => Date.parse(c.due_at)));
  };

  beforeAll(async () => {
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ana Lima', email: 'ana@example.test' },
    });
    agentId = agent.body.id;
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'ana', role: 'agent', agent_id: agentId },
    });
    agentToken = token.body.token;
    await create('low', { subject: 'Typo on the pricing page', priority: 'low' });
    await create('normal', {
      subject: 'Export drops a row',
      priority: 'normal',
      assignee_id: agentId,
    });
    await create('urgent', { subject: 'Checkout returns 502', priority: 'urgent' });
    await create('high', {
      subject: 'Invoices sent twice',
      priority: 'high',
      requester_org: 'Acme',
    });
    await create('resolved', { subject: 'Password reset mail', priority: 'urgent' });
    await create('waiting', { subject: 'Cannot add an admin', priority: 'high' });
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${ids.resolved}/transitions`,
      payload: { status: 'resolved' },
    });
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${ids.waiting}/transitions`,
      payload: { status: 'waiting' },
    });
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${ids.low}/comments`,
      payload: { body: 'The word is misspelt as "flamingo" in the header.', public_reply: false },
    });
  });

  it('sorts by next SLA deadline: running clocks first, earliest first; the others last', async () => {
    const body = await list('sort=deadline&limit=100');
    const got = order(body);
    expect(got).toHaveLength(6);
    const dues = await Promise.all(got.map(nextDue));
    expect(dues).toEqual([...dues].sort((a, b) => a - b));
    expect(got.slice(-2).sort()).toEqual([ids.resolved, ids.waiting].sort());
    expect(got[0]).toBe(ids.urgent);
  });

  it('sorts by priority (urgent first, newest first within one) and by age (oldest first)', async () => {
    expect(order(await list('sort=priority&limit=100'))).toEqual([
      ids.resolved,
      ids.urgent,
      ids.waiting,
      ids.high,
      ids.normal,
      ids.low,
    ]);
    expect(order(await list('sort=age&limit=100'))).toEqual([
      ids.low,
      ids.normal,
      ids.urgent,
      ids.high,
      ids.resolved,
      ids.waiting,
    ]);
    expect(order(await list('limit=100'))[0]).toBe(ids.waiting);
  });

  it('walks every ordering page by page with the cursor: same rows, none twice', async () => {
    for (const sort of ['deadline', 'priority', 'age', 'newest']) {
      const whole = order(await list(`sort=${sort}&limit=100`));
      const walked: number[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await list(
          `sort=${sort}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        walked.push(...order(page));
        cursor = page.next_cursor;
        expect(page.total).toBe(6);
        expect(page.total_exact).toBe(true);
      } while (cursor);
      expect(walked).toEqual(whole);
    }
    const bad = await t.admin({ method: 'GET', url: '/api/tickets?cursor=nonsense' });
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((i: any) => i.path)).toEqual(['cursor']);
  });

  it('keeps the next deadline where the clocks change: a resolved ticket moves last', async () => {
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${ids.urgent}/transitions`,
      payload: { status: 'resolved' },
    });
    const got = order(await list('sort=deadline&limit=100'));
    expect(got.slice(0, 3)).not.toContain(ids.urgent);
    const dues = await Promise.all(got.map(nextDue));
    expect(dues).toEqual([...dues].sort((a, b) => a - b));
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${ids.urgent}/transitions`,
      payload: { status: 'open' },
    });
  });

  it('searches subject, requester and comments with PostgreSQL full-text search', async () => {
    expect(order(await list('q=flamingo'))).toEqual([ids.low]);
    expect(order(await list('q=invoices'))).toEqual([ids.high]);
    expect(order(await list('q=acme'))).toEqual([ids.high]);
    expect(order(await list('q=rui&limit=100'))).toHaveLength(6);
    // a ticket matches when its subject and requester, or one of its comments, match
    expect(order(await list('q=%22misspelt%20as%22'))).toEqual([ids.low]);
    expect(order(await list('q=invoices%20-twice'))).toEqual([]);
    expect(order(await list('q=checkout&status=resolved'))).toEqual([]);
    const empty = await t.admin({ method: 'GET', url: '/api/tickets?q=%20' });
    expect(empty.status).toBe(400);
  });

  it('finds a page of a word in more tickets than the count bound without gathering them all', async () => {
    // 1,100 tickets say "printer" (past COUNT_BOUND: the list walks its ordering), and one
    // older ticket says it only in a comment
    const older = await t.pool.query<{ id: number }>(
      `insert into stega.tickets (subject, requester_name, requester_email, priority,
                                  created_at, updated_at)
       values ('Paper jam', 'Rui Requester', 'rui@example.test', 'low',
               '2026-03-01T09:00:00Z', '2026-03-01T09:00:00Z')
       returning id`,
    );
    const olderId = Number(older.rows[0]?.id);
    const comment = await t.admin({
      method: 'POST',
      url: `/api/tickets/${olderId}/comments`,
      payload: { body: 'The printer on floor 2 again', public_reply: false },
    });
    expect(comment.status, JSON.stringify(comment.body)).toBe(201);
    await t.pool.query(
      `insert into stega.tickets (subject, requester_name, requester_email, priority,
                                  created_at, updated_at)
       select 'Printer offline ' || n, 'Rui Requester', 'rui@example.test', 'normal',
              '2026-03-02T09:00:00Z'::timestamptz + n * interval '1 second',
              '2026-03-02T09:00:00Z'
         from generate_series(1, 1100) n`,
    );
    // the word statistics the list's choice of plan reads (autovacuum would gather them later)
    await t.pool.query('analyze stega.tickets');
    try {
      const page = await list('q=printer&sort=newest&limit=50');
      expect(page.items).toHaveLength(50);
      expect(page.total_exact).toBe(false);
      expect(page.total).toBeGreaterThan(1000);
      expect(page.items.every((i: any) => /printer/i.test(i.subject))).toBe(true);
      // newest first, and every page reachable by its cursor down to the comment's ticket
      const seen: number[] = [...order(page)];
      let cursor = page.next_cursor;
      while (cursor) {
        const next = await list(`q=printer&sort=newest&limit=200&cursor=${cursor}`);
        seen.push(...order(next));
        cursor = next.next_cursor;
      }
      expect(seen).toHaveLength(1101);
      expect(new Set(seen).size).toBe(1101);
      expect(seen[seen.length - 1]).toBe(olderId);
    } finally {
      await t.pool.query(`delete from stega.ticket_comments where ticket_id = $1`, [olderId]);
      await t.pool.query(
        `delete from stega.tickets where id = $1 or subject like 'Printer offline %'`,
        [olderId],
      );
    }
  });

  it('has "my tickets" for an agent token and "unassigned"', async () => {
    expect(order(await list('assignee_id=me', agentToken))).toEqual([ids.normal]);
    const admin = await t.admin({ method: 'GET', url: '/api/tickets?assignee_id=me' });
    expect(admin.status).toBe(400);
    expect(admin.body.issues[0]).toMatchObject({ path: 'assignee_id' });
    expect(order(await list('assignee_id=none&limit=100'))).not.toContain(ids.normal);
  });

  it('answers 304 to a poll when nothing changed, and the new list after a change', async () => {
    const url = '/api/tickets?sort=deadline';
    const first = await t.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\//);
    const again = await t.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    t.clock.set(new Date(t.clock.now().getTime() + 1000).toISOString());
    await t.admin({
      method: 'PATCH',
      url: `/api/tickets/${ids.low}`,
      payload: { subject: 'Typo on the prices page' },
    });
    const changed = await t.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'if-none-match': etag },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });
});
