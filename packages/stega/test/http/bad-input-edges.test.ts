import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startTestApp } from './app-fixture.js';

const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * The inputs that used to reach PostgreSQL and fail there (500, an error in the log): NUL
 * bytes, list cursors whose sort value the keyset cannot read, a queue name of spaces, a
 * search of excluded words only. Each is a 400 naming the field, and nothing is logged at error.
 */
describe('bad input at the edges: 400 naming the field, no error log', async () => {
  const errors: string[] = [];
  const t = await startTestApp(
    undefined,
    createLogger(
      'warn',
      'web',
      'json',
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean))
            if (JSON.parse(line).level >= 50) errors.push(line);
          done();
        },
      }),
    ),
  );
  const issueOf = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
    const response = await t.admin({ method, url, ...(payload ? { payload } : {}) });
    expect(response.status, `${method} ${url}: ${JSON.stringify(response.body)}`).toBe(400);
    expect(response.body.code).toBe('STEGA_ERR_VALIDATION');
    return response.body.issues[0];
  };

  beforeAll(async () => {
    for (const subject of ['Printer on fire', 'Printer jammed', 'Scanner offline']) {
      const created = await t.admin({
        method: 'POST',
        url: '/api/tickets',
        payload: { subject, requester_name: 'R', requester_email: 'r@example.test' },
      });
      expect(created.status).toBe(201);
    }
  });

  it('refuses a NUL byte in a JSON body, a query string or a path, naming where it is', async () => {
    expect(
      await issueOf('POST', '/api/tickets', {
        subject: 'Printer\u0000',
        requester_name: 'R',
        requester_email: 'r@example.test',
      }),
    ).toEqual({ path: 'subject', message: 'must not contain a NUL character (\\u0000)' });
    expect(await issueOf('POST', '/api/teams', { name: 'ok', tags: ['a', 'b\u0000'] })).toEqual({
      path: 'tags[1]',
      message: 'must not contain a NUL character (\\u0000)',
    });
    expect((await issueOf('GET', '/api/tickets?q=printer%00')).path).toBe('q');
    expect((await issueOf('GET', '/api/tickets?requester_org=%00')).path).toBe('requester_org');
    expect((await issueOf('GET', '/api/customers?q=a%00b')).path).toBe('q');
    expect((await issueOf('GET', '/api/queues/a%00b')).path).toBe('queue');
  });

  it('refuses a cursor its list did not make: unreadable, or a sort value the ordering cannot read', async () => {
    const first = await t.admin({ method: 'GET', url: '/api/tickets?sort=age&limit=1' });
    expect(first.status).toBe(200);
    const next = first.body.next_cursor as string;
    expect(
      (await t.admin({ method: 'GET', url: `/api/tickets?sort=age&cursor=${next}` })).status,
    ).toBe(200);
    for (const [sort, bad] of [
      ['newest', '!!!'],
      ['newest', cursor(['x', 1])],
      ['age', cursor(['x', 1])],
      ['age', cursor(['2026-02-30T00:00:00.000000Z', 1])],
      ['age', cursor(['10000-01-01T00:00:00.000000Z', 1])],
      ['deadline', cursor(['yesterday', 1])],
      ['priority', cursor(['urgent', 1])],
      ['priority', cursor(['99999', 1])],
      ['age', cursor([null, 1])],
      ['newest', cursor([null, 0])],
      ['newest', cursor([null, 1e20])],
      // a cursor of another ordering
      ['priority', next],
    ] as const) {
      expect(await issueOf('GET', `/api/tickets?sort=${sort}&cursor=${bad}`)).toEqual({
        path: 'cursor',
        message: 'is not a cursor of this list (take next_cursor as it is)',
      });
    }
  });

  it('refuses a search of excluded words only, which would read every comment; a word with exclusions still searches', async () => {
    for (const q of ['-printer', '-printer -scanner', 'printer or -scanner']) {
      const issue = await issueOf('GET', `/api/tickets?q=${encodeURIComponent(q)}`);
      expect(issue.path).toBe('q');
      expect(issue.message).toMatch(/^needs a word to look for: a search of excluded words only/);
    }
    expect((await issueOf('GET', '/api/tickets?q=%21%21%21')).message).toBe(
      'has no word to look for',
    );
    const found = await t.admin({ method: 'GET', url: '/api/tickets?q=printer%20-jammed' });
    expect(found.status).toBe(200);
    expect(found.body.items.map((i: { subject: string }) => i.subject)).toEqual([
      'Printer on fire',
    ]);
  });

  it('refuses a queue name the engine refuses, and an instant PostgreSQL cannot hold', async () => {
    expect((await issueOf('GET', '/api/queues/%20')).message).toMatch(
      /queue must be a non-empty string/,
    );
    const far = await t.admin({
      method: 'GET',
      url: '/api/sla-achievement?start=0000-01-01T00:00:00Z&end=2026-03-02T00:00:00Z',
    });
    expect(far.status).toBeLessThan(500);
  });

  it('wrote no error to the log', () => {
    expect(errors).toEqual([]);
  });
});
