import { describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { type PagingNames, pagingBreach } from './paging-breach.js';
import { startPagingScene } from './paging-scene.js';

type Row = Record<string, unknown>;

const PAGING_NAMES: PagingNames = {
  escalation: 'mail page',
  policy: 'mail policy',
  org: 'Mail',
  subject: 'Mailing',
  requesterEmail: 'req@mail.test',
};

interface Method {
  id: number;
  method: string;
  address: string;
  verified: boolean;
}

/**
 * Email contact methods beyond the sign-in address, through the real processes: `stega start`
 * (web server and an sla-breach-worker) and a real SMTP server. The address gets a code by
 * email, given back to the verify endpoint; until then no page is ever mailed to it.
 */
describe('end to end: an email contact method is verified by a mailed code before a page goes to it', async () => {
  const { pool, smtp, stega, calendarId } = await startPagingScene(0.1);

  /** An agent with rules "email at 0" and an API token of their own. */
  async function agent(name: string) {
    const email = `${name.toLowerCase()}@mail.test`;
    const created = await stega.api<{ id: number }>('POST', '/api/agents', { name, email });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    const token = await stega.api<{ token: string }>('POST', '/api/tokens', {
      name: `${name}'s token`,
      role: 'agent',
      agent_id: id,
    });
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    const rules = await stega.api('PUT', `/api/agents/${id}/notification-rules`, {
      high: [{ method: 'email', delay_minutes: 0 }],
    });
    expect(rules.status, JSON.stringify(rules.body)).toBe(200);
    /** The API as the agent themselves. */
    const own = async <T>(method: string, route: string, body?: unknown) => {
      const response = await fetch(`${stega.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token.body.token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as T };
    };
    return { id, email, own, methods: `/api/agents/${id}/contact-methods` };
  }

  const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

  /** The page's rows of `agentId` once every one of them is delivered. */
  const deliveredRows = (ticketId: number, agentId: number) =>
    eventually(
      async () => {
        const { rows } = await pool.query(
          `select recipient, channel, status from stega.alert_deliveries
            where ticket_id = $1 and page_agent_id = $2 order by recipient`,
          [ticketId, agentId],
        );
        return rows.length > 0 && rows.every((r) => r.status === 'delivered')
          ? (rows as Row[])
          : undefined;
      },
      'the email steps delivered',
      PROCESS_PATIENCE,
    );

  it('an unverified address is never mailed a page; once its mailed code is confirmed it receives the rule’s email', async () => {
    const gil = await agent('Gil');
    const pager = 'gil.pager@elsewhere.test';
    const added = await gil.own<Method>('POST', gil.methods, { method: 'email', address: pager });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body).toMatchObject({ method: 'email', address: pager, verified: false });
    // the code went to that address before the answer, and nothing else did
    const [codeMail, ...others] = mailsTo(pager);
    expect(others).toEqual([]);
    const code = /verification code is (\d{6})/.exec(codeMail?.header('subject') ?? '')?.[1];
    expect(code).toMatch(/^\d{6}$/);

    // listed in full to the agent, masked to an admin
    const own = await gil.own<{ items: Method[] }>('GET', gil.methods);
    expect(own.body.items.map((m) => m.address)).toEqual([pager]);
    const admin = await stega.api<{ items: Method[] }>('GET', gil.methods);
    expect(admin.body.items.map((m) => m.address)).toEqual(['g***@elsewhere.test']);

    // paged while unverified: the sign-in address is mailed, the new one is not even planned
    const first = await pagingBreach(stega, pool, calendarId, PAGING_NAMES, 'one', [gil.id]);
    const rows = await deliveredRows(first.ticketId, gil.id);
    expect(rows.map((r) => r.recipient)).toEqual([gil.email]);
    expect(mailsTo(gil.email).length).toBe(1);
    expect(mailsTo(pager).length).toBe(1);

    const wrong = await gil.own<{ issues: { path: string }[] }>(
      'POST',
      `${gil.methods}/${added.body.id}/verify`,
      { code: code === '000000' ? '111111' : '000000' },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.issues.map((i) => i.path)).toEqual(['code']);
    const verified = await gil.own<Method>('POST', `${gil.methods}/${added.body.id}/verify`, {
      code,
    });
    expect(verified.body.verified).toBe(true);

    // paged once verified: both addresses get the page
    const second = await pagingBreach(stega, pool, calendarId, PAGING_NAMES, 'two', [gil.id]);
    const after = await deliveredRows(second.ticketId, gil.id);
    expect(after.map((r) => [r.recipient, r.channel])).toEqual([
      [pager, 'email'],
      [gil.email, 'email'],
    ]);
    const paged = mailsTo(pager).slice(1);
    expect(paged.length).toBe(1);
    expect(paged[0]?.raw).toContain(`#${second.ticketId}`);
  });

  it('the sign-in address is verified at once, without a code', async () => {
    const hal = await agent('Hal');
    const before = mailsTo(hal.email).length;
    const added = await hal.own<Method>('POST', hal.methods, {
      method: 'email',
      address: hal.email,
    });
    expect(added.status).toBe(201);
    expect(added.body.verified).toBe(true);
    expect(mailsTo(hal.email).length).toBe(before);
  });

  it('limits verification mail per address and per agent: past it 429 with Retry-After, and nothing is sent or stored', async () => {
    const jo = await agent('Jo');
    const target = 'someone.else@victim.test';
    const added = await jo.own<Method>('POST', jo.methods, { method: 'email', address: target });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const resend = () => jo.own<{ code?: string }>('POST', `${jo.methods}/${added.body.id}/resend`);
    // VERIFICATION_SENDS_PER_ADDRESS_HOUR: 5 (the default), the first code included
    for (let i = 0; i < 4; i++) expect((await resend()).status).toBe(200);
    expect(mailsTo(target).length).toBe(5);
    const refusal = await fetch(`${stega.url}${jo.methods}/${added.body.id}/resend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stega.token}` },
    });
    const body = (await refusal.json()) as { code: string; message: string };
    expect(refusal.status, JSON.stringify(body)).toBe(429);
    expect(body.code).toBe('STEGA_ERR_TOO_MANY_CODES');
    expect(body.message).toMatch(/to this address: at most 5 an hour; try again in \d+ min/);
    const wait = Number(refusal.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(3000);
    expect(wait).toBeLessThanOrEqual(3600);
    expect(mailsTo(target).length).toBe(5);

    // another agent adding the same address (any case) is refused too, and nothing is stored
    const kim = await agent('Kim');
    const again = await kim.own<{ code: string }>('POST', kim.methods, {
      method: 'email',
      address: target.toUpperCase(),
    });
    expect(again.status).toBe(429);
    expect(again.body.code).toBe('STEGA_ERR_TOO_MANY_CODES');
    expect((await kim.own<{ items: Method[] }>('GET', kim.methods)).body.items).toEqual([]);
    expect(mailsTo(target).length).toBe(5);

    // VERIFICATION_SENDS_PER_AGENT_HOUR: 10 for one agent's methods, whatever the addresses
    for (let i = 1; i <= 5; i++) {
      const other = await jo.own('POST', jo.methods, {
        method: 'email',
        address: `jo${i}@mail.test`,
      });
      expect(other.status, JSON.stringify(other.body)).toBe(201);
    }
    const eleventh = await jo.own<{ code: string; message: string }>('POST', jo.methods, {
      method: 'email',
      address: 'jo6@mail.test',
    });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.message).toMatch(/for this agent's contact methods: at most 10 an hour/);
    expect(mailsTo('jo6@mail.test')).toEqual([]);
    // a method already verified, added again, is returned as it is: nothing sent or counted
    const jo1 = (await jo.own<{ items: Method[] }>('GET', jo.methods)).body.items.find(
      (m) => m.address === 'jo1@mail.test',
    );
    const code = /verification code is (\d{6})/.exec(
      mailsTo('jo1@mail.test')[0]?.header('subject') ?? '',
    )?.[1];
    const confirmed = await jo.own<Method>('POST', `${jo.methods}/${jo1?.id}/verify`, { code });
    expect(confirmed.body.verified).toBe(true);
    const readded = await jo.own<Method>('POST', jo.methods, {
      method: 'email',
      address: 'jo1@mail.test',
    });
    expect(readded.status, JSON.stringify(readded.body)).toBe(201);
    expect(readded.body).toMatchObject({ id: jo1?.id, verified: true });
    expect(mailsTo('jo1@mail.test').length).toBe(1);
    // Kim's own count is untouched
    expect(
      (await kim.own('POST', kim.methods, { method: 'email', address: 'kim2@mail.test' })).status,
    ).toBe(201);
  });

  it('refuses a malformed address with a 400 naming the field', async () => {
    const ivo = await agent('Ivo');
    const bad = await ivo.own<{ issues?: { path: string; message: string }[] }>(
      'POST',
      ivo.methods,
      { method: 'email', address: 'ivo at home' },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.issues).toEqual([{ path: 'address', message: 'must be an email address' }]);
    expect((await stega.api<{ items: Method[] }>('GET', ivo.methods)).body.items).toEqual([]);
  });
});
