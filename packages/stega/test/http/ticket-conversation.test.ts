import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN as ADMIN, startTestApp } from './app-fixture.js';

const newTicket = {
  subject: 'A long conversation',
  requester_name: 'Rui',
  requester_email: 'rui@example.test',
};

/** Issue 24: a ticket's detail stays bounded whatever its conversation; writes are limited. */
describe('a ticket with a long conversation', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  let ticketId: number;
  let otherTicketId: number;
  const bodies: string[] = [];

  beforeAll(async () => {
    ticketId = (await t.admin({ method: 'POST', url: '/api/tickets', payload: newTicket })).body.id;
    otherTicketId = (await t.admin({ method: 'POST', url: '/api/tickets', payload: newTicket }))
      .body.id;
    for (let i = 1; i <= 25; i++) {
      t.clock.advanceMinutes(1);
      const body = `comment ${i}: ${'words to compress '.repeat(100)}end`;
      const comment = await t.admin({
        method: 'POST',
        url: `/api/tickets/${ticketId}/comments`,
        payload: { body, public_reply: false },
      });
      expect(comment.status, JSON.stringify(comment.body)).toBe(201);
      bodies.push(body);
    }
  });

  const detail = () => t.admin({ method: 'GET', url: `/api/tickets/${ticketId}` });
  const comments = (query: string, id = ticketId) =>
    t.admin({ method: 'GET', url: `/api/tickets/${id}/comments${query}` });

  it('the detail carries the newest 8 comments, oldest first, the count and the cursor of the older ones', async () => {
    const { status, body } = await detail();
    expect(status).toBe(200);
    expect(body.comments_total).toBe(25);
    expect(body.comments.map((c: { body: string }) => c.body)).toEqual(bodies.slice(17));
    expect(body.comments_next_cursor).toBe(String(body.comments[0].id));
  });

  it('the comments endpoint pages through the rest, newest first, to a last page without a cursor', async () => {
    const first = (await detail()).body;
    const seen: string[] = [];
    let cursor: string | null = first.comments_next_cursor;
    let pages = 0;
    while (cursor !== null) {
      const page = await comments(`?cursor=${cursor}&limit=7`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(7);
      seen.push(...page.body.items.map((c: { body: string }) => c.body));
      cursor = page.body.next_cursor;
      pages++;
    }
    expect(pages).toBe(3); // 7 + 7 + 3
    expect(seen).toEqual(bodies.slice(0, 17).reverse());
    const newest = await comments('?limit=3');
    expect(newest.body.items.map((c: { body: string }) => c.body)).toEqual(
      bodies.slice(22).reverse(),
    );
  });

  it('refuses a cursor it did not make and a limit over 200 with a 400 naming the field; a cursor of another ticket reads nothing', async () => {
    for (const [query, path] of [
      ['?cursor=abc', 'cursor'],
      ['?cursor=0', 'cursor'],
      ['?cursor=99999999999999999999', 'cursor'],
      ['?limit=201', 'limit'],
    ] as const) {
      const answer = await comments(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.issues.map((i: { path: string }) => i.path)).toEqual([path]);
    }
    const cursor = (await detail()).body.comments_next_cursor;
    expect((await comments(`?cursor=${cursor}`, otherTicketId)).body).toEqual({
      items: [],
      next_cursor: null,
    });
  });

  it('activity pages the same way', async () => {
    const { body } = await detail();
    // created, its clocks started, 25 comments: under the detail's 50
    expect(body.activity.length).toBeGreaterThan(25);
    expect(body.activity.length).toBeLessThan(50);
    expect(body.activity_next_cursor).toBeNull();
    const page = await t.admin({
      method: 'GET',
      url: `/api/tickets/${ticketId}/activity?limit=5`,
    });
    expect(page.body.items.map((a: { id: number }) => a.id)).toEqual(
      body.activity
        .slice(-5)
        .reverse()
        .map((a: { id: number }) => a.id),
    );
    const rest = await t.admin({
      method: 'GET',
      url: `/api/tickets/${ticketId}/activity?cursor=${page.body.next_cursor}&limit=200`,
    });
    expect(rest.body.items.map((a: { id: number }) => a.id)).toEqual(
      body.activity
        .slice(0, -5)
        .reverse()
        .map((a: { id: number }) => a.id),
    );
    expect(rest.body.next_cursor).toBeNull();
  });

  it('answers 404 for the pages of a ticket that does not exist', async () => {
    expect((await comments('', 987654)).status).toBe(404);
  });

  it('refuses a comment over 20,000 characters with a 400 naming the field and the limit', async () => {
    const answer = await t.admin({
      method: 'POST',
      url: `/api/tickets/${ticketId}/comments`,
      payload: { body: 'x'.repeat(20_001) },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toEqual([
      { path: 'body', message: expect.stringContaining('at most 20000 characters') },
    ]);
    const fits = await t.admin({
      method: 'POST',
      url: `/api/tickets/${otherTicketId}/comments`,
      payload: { body: 'x'.repeat(20_000), public_reply: false },
    });
    expect(fits.status).toBe(201);
  });

  it('answers If-None-Match with the current ETag by 304 and no body, until the ticket changes', async () => {
    const first = await t.app.inject({
      method: 'GET',
      url: `/api/tickets/${ticketId}`,
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/".+"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    const again = await t.app.inject({
      method: 'GET',
      url: `/api/tickets/${ticketId}`,
      headers: { authorization: `Bearer ${ADMIN}`, 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${ticketId}/comments`,
      payload: { body: 'one more', public_reply: false },
    });
    const changed = await t.app.inject({
      method: 'GET',
      url: `/api/tickets/${ticketId}`,
      headers: { authorization: `Bearer ${ADMIN}`, 'if-none-match': etag },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().comments.at(-1).body).toBe('one more');
  });

  it('compresses the detail for a client that accepts gzip', async () => {
    const plain = await t.app.inject({
      method: 'GET',
      url: `/api/tickets/${ticketId}`,
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(plain.headers['content-encoding']).toBeUndefined();
    const zipped = await t.app.inject({
      method: 'GET',
      url: `/api/tickets/${ticketId}`,
      headers: { authorization: `Bearer ${ADMIN}`, 'accept-encoding': 'gzip' },
    });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(JSON.parse(gunzipSync(zipped.rawPayload).toString('utf8'))).toEqual(plain.json());
  });
});

describe('write limits per agent and token', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z', undefined, {
    WRITE_LIMIT_TICKETS: '2',
    WRITE_LIMIT_COMMENTS: '3',
    WRITE_LIMIT_ACKNOWLEDGEMENTS: '2',
    WRITE_LIMIT_CHANGES: '3',
    // a window no test run outlasts: the counts cannot reset between the requests
    WRITE_LIMIT_WINDOW_SECONDS: '86400',
  });
  const agentToken = async (name: string) => {
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name, email: `${name.toLowerCase()}@example.test` },
    });
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: `${name} laptop`, role: 'agent', agent_id: agent.body.id },
    });
    expect(token.status).toBe(201);
    return token.body.token as string;
  };
  const create = (token: string, payload: Record<string, unknown> = newTicket) =>
    t.app.inject({
      method: 'POST',
      url: '/api/tickets',
      headers: { authorization: `Bearer ${token}` },
      payload,
    });

  it('answers the third ticket of an agent in the window 429 with Retry-After; a 400 does not count; others write on', async () => {
    const ana = await agentToken('Ana');
    expect((await create(ana, { subject: '' })).statusCode).toBe(400);
    expect((await create(ana)).statusCode).toBe(201);
    expect((await create(ana)).statusCode).toBe(201);
    const refused = await create(ana);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({
      code: 'STEGA_ERR_TOO_MANY_WRITES',
      message: expect.stringContaining('at most 2 per 86400 s'),
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    // another agent has a budget of their own; the admin token is not limited
    const bruno = await agentToken('Bruno');
    expect((await create(bruno)).statusCode).toBe(201);
    for (let i = 0; i < 3; i++) expect((await create(ADMIN)).statusCode).toBe(201);
  });

  it('counts comments apart from tickets: the fourth comment is refused', async () => {
    const carla = await agentToken('Carla');
    const ticket = await create(carla);
    expect(ticket.statusCode).toBe(201);
    const comment = () =>
      t.app.inject({
        method: 'POST',
        url: `/api/tickets/${ticket.json().id}/comments`,
        headers: { authorization: `Bearer ${carla}` },
        payload: { body: 'still here' },
      });
    for (let i = 0; i < 3; i++) expect((await comment()).statusCode).toBe(201);
    const refused = await comment();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(refused.json().message).toContain('comments posted');
  });

  it('counts acknowledgements apart: the third is refused, whatever there was to acknowledge', async () => {
    const dora = await agentToken('Dora');
    const ticket = await create(dora);
    expect(ticket.statusCode).toBe(201);
    const acknowledge = () =>
      t.app.inject({
        method: 'POST',
        url: `/api/tickets/${ticket.json().id}/acknowledge`,
        headers: { authorization: `Bearer ${dora}` },
        payload: { via: 'app' },
      });
    for (let i = 0; i < 2; i++) expect((await acknowledge()).statusCode).not.toBe(429);
    const refused = await acknowledge();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(refused.json().message).toContain('acknowledgements');
  });

  it('counts every other write as a change: the fourth field change is refused, tickets and comments apart', async () => {
    const emil = await agentToken('Emil');
    const ticket = await create(emil);
    expect(ticket.statusCode).toBe(201);
    const id = ticket.json().id;
    const as = (method: 'PATCH' | 'POST', url: string, payload: object) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${emil}` }, payload });
    expect((await as('PATCH', `/api/tickets/${id}`, { priority: 'high' })).statusCode).toBe(200);
    expect(
      (await as('POST', `/api/tickets/${id}/transitions`, { status: 'in_progress' })).statusCode,
    ).toBe(200);
    expect(
      (await as('POST', '/api/customers', { email: 'emil.customer@example.test' })).statusCode,
    ).toBe(201);
    const refused = await as('PATCH', `/api/tickets/${id}`, { priority: 'low' });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(refused.json().message).toContain('too many changes');
    // a comment has its budget of its own, and reads are never counted
    expect((await as('POST', `/api/tickets/${id}/comments`, { body: 'noted' })).statusCode).toBe(
      201,
    );
    const read = await t.app.inject({
      method: 'GET',
      url: `/api/tickets/${id}`,
      headers: { authorization: `Bearer ${emil}` },
    });
    expect(read.statusCode).toBe(200);
  });
});
