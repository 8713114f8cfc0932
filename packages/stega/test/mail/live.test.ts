import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { intakeScene, rawMail } from './intake-scene.js';

/** One agent's GET /api/live over real HTTP: the events so far, in order. */
async function liveStream(base: string, token: string) {
  const events: { event: string; data: unknown }[] = [];
  let buffer = '';
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http
      .get(
        `${base}/api/live`,
        {
          headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
          agent: false,
        },
        resolve,
      )
      .on('error', reject);
  });
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      const event = field('event');
      if (event) events.push({ event, data: JSON.parse(field('data') ?? 'null') });
    }
  });
  response.on('error', () => {});
  await eventually(() => events.some((e) => e.event === 'ready') || undefined, 'the stream ready');
  return {
    response,
    events,
    tickets: () =>
      events
        .filter((e) => e.event === 'ticket')
        .map((e) => (e.data as { ticket_id: number }).ticket_id),
    close: async () => {
      response.destroy();
    },
  };
}

/**
 * Live updates (issue 23): a customer's email filed by the intake reaches, over GET /api/live,
 * the agents who may see its ticket and no one else; the stream is fed by the database's
 * NOTIFY, so it does not matter which process filed the mail.
 */
describe('live updates of tickets', async () => {
  const s = await intakeScene();
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
  const ok = async (method: 'POST' | 'PUT', url: string, payload: object) => {
    const answer = await s.admin({ method, url, payload });
    expect(answer.status, `${method} ${url} ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body as Record<string, unknown>;
  };
  const billing = await ok('POST', '/api/teams', { name: 'Billing' });
  const agent = async (name: string, team: number) => {
    const made = await ok('POST', '/api/agents', {
      name,
      email: `${name.toLowerCase()}@acme.test`,
      role: 'agent',
    });
    await ok('PUT', `/api/teams/${team}/members/${made.id}`, {});
    const token = await ok('POST', '/api/tokens', { name, role: 'agent', agent_id: made.id });
    return token.token as string;
  };
  // Ana is of the mailbox's team (Support); Gil of Billing, who must not see its tickets
  const ana = await agent('Ana', s.team.id);
  const gil = await agent('Gil', billing.id as number);

  it('tells the agent who may see the ticket of a filed customer email, and not one of another team', async () => {
    const anaLive = await liveStream(base, ana);
    const gilLive = await liveStream(base, gil);
    try {
      expect(anaLive.response.headers['content-type']).toMatch(/^text\/event-stream/);
      // a new message: a ticket of team Support
      await s.sendRaw(rawMail({ messageId: 'live-1@customer.test', subject: 'Live one' }));
      const [first] = await s.settled('live-1@customer.test');
      const ticketId = Number(first.ticket_id);
      await eventually(() => anaLive.tickets().includes(ticketId) || undefined, 'Ana told of it');
      // the customer's answer joins it as a comment: Ana hears again
      const before = anaLive.tickets().length;
      await s.sendRaw(
        rawMail({
          messageId: 'live-2@customer.test',
          subject: 'Re: Live one',
          headers: ['In-Reply-To: <live-1@customer.test>'],
          body: 'It works again, thanks.',
        }),
      );
      const [reply] = await s.settled('live-2@customer.test');
      expect(Number(reply.ticket_id)).toBe(ticketId);
      expect(reply.comment_id).not.toBeNull();
      await eventually(
        () => anaLive.tickets().slice(before).includes(ticketId) || undefined,
        'Ana told of the comment',
      );
      // then a ticket of no team, which both may see: Gil hears of it, and of nothing before it
      const open = await ok('POST', '/api/tickets', {
        subject: 'For everyone',
        requester_name: 'Carol',
        requester_email: 'carol@customer.test',
        priority: 'normal',
      });
      const openId = Number(open.id);
      await eventually(() => gilLive.tickets().includes(openId) || undefined, 'Gil told of it');
      await eventually(() => anaLive.tickets().includes(openId) || undefined, 'Ana told of it');
      expect(gilLive.tickets()).not.toContain(ticketId);
      expect(gilLive.tickets()[0]).toBe(openId);
      // Ana heard of her ticket before the open one: the order of the commits
      expect(anaLive.tickets().indexOf(ticketId)).toBeLessThan(anaLive.tickets().indexOf(openId));
    } finally {
      await anaLive.close();
      await gilLive.close();
    }
  });

  it('listens again when its database connection is lost, and says to resync', async () => {
    const anaLive = await liveStream(base, ana);
    try {
      const { rows } = await s.pool.query(
        `select pg_terminate_backend(pid) as ended from pg_stat_activity
          where datname = current_database() and query = 'listen stega_ticket_changed'`,
      );
      expect(rows).toHaveLength(1);
      await eventually(
        () => anaLive.events.some((e) => e.event === 'resync') || undefined,
        'Ana told to resync',
      );
      const open = await ok('POST', '/api/tickets', {
        subject: 'After the outage',
        requester_name: 'Carol',
        requester_email: 'carol@customer.test',
        priority: 'normal',
      });
      await eventually(
        () => anaLive.tickets().includes(Number(open.id)) || undefined,
        'Ana told of a change after it',
      );
    } finally {
      await anaLive.close();
    }
  });
});
