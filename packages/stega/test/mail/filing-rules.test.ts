import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { intakeScene, rawMail } from './intake-scene.js';

/** How received mail is filed: loops, reopening, follow-ups, subject tags, the next-reply clock. */
describe('filing rules', async () => {
  const s = await intakeScene({ INBOUND_NEW_TICKETS_PER_SENDER_HOUR: '3' });
  const ticket = async (id: number) =>
    (await s.pool.query('select * from stega.tickets where id = $1', [id])).rows[0];
  const newTicket = async (messageId: string, from = 'Rui Costa <rui@customer.test>') => {
    await s.sendRaw(rawMail({ messageId, from, subject: `About ${messageId}` }));
    const [receipt] = await s.settled(messageId);
    expect(receipt.state).toBe('filed');
    return receipt.ticket_id as number;
  };
  const reply = async (messageId: string, to: string, from = 'Rui Costa <rui@customer.test>') => {
    await s.sendRaw(
      rawMail({ messageId, from, subject: 'Re: it', headers: [`In-Reply-To: <${to}>`] }),
    );
    return (await s.settled(messageId))[0];
  };

  it('never makes a ticket of an automatic message (Auto-Submitted, X-Autoreply, Precedence)', async () => {
    const heads = [
      'Auto-Submitted: auto-replied',
      'X-Autoreply: yes',
      'Precedence: bulk',
      'Precedence: junk',
      'Precedence: list',
    ];
    for (const [i, header] of heads.entries()) {
      await s.sendRaw(rawMail({ messageId: `auto-${i}@customer.test`, headers: [header] }));
    }
    for (const [i, header] of heads.entries()) {
      const [receipt] = await s.settled(`auto-${i}@customer.test`);
      expect(receipt).toMatchObject({ state: 'ignored', ticket_id: null });
      expect(receipt.reason).toContain(header.split(':')[0]);
    }
    // an automatic answer to a ticket's mail joins nothing either
    const id = await newTicket('loop-base@customer.test');
    await s.sendRaw(
      rawMail({
        messageId: 'ooo@customer.test',
        headers: ['In-Reply-To: <loop-base@customer.test>', 'Auto-Submitted: auto-replied'],
      }),
    );
    expect((await s.settled('ooo@customer.test'))[0].state).toBe('ignored');
    const comments = await s.pool.query(
      'select 1 from stega.ticket_comments where ticket_id = $1',
      [id],
    );
    expect(comments.rowCount).toBe(0);
  });

  it("ignores Stega's own mail, and holds a sender over the new-ticket limit for an admin", async () => {
    await s.sendRaw(rawMail({ messageId: 'own@stega', from: 'Stega <stega@localhost>' }));
    expect((await s.settled('own@stega'))[0]).toMatchObject({ state: 'ignored', ticket_id: null });
    for (const n of [1, 2, 3]) await newTicket(`robot-${n}@robot.test`, 'robot@robot.test');
    await s.sendRaw(rawMail({ messageId: 'robot-4@robot.test', from: 'robot@robot.test' }));
    const [fourth] = await s.settled('robot-4@robot.test');
    // held in the quarantine rather than ignored: a forged sender must not lose a real
    // customer's request, so an admin sees it and may let it through
    expect(fourth).toMatchObject({ state: 'quarantined', ticket_id: null });
    expect(fourth.reason).toBe(
      'sender opened 3 tickets in the last hour (limit 3); retry to file it anyway',
    );
    // replies still join: the limit is on new tickets
    const joined = await reply('robot-5@robot.test', 'robot-1@robot.test', 'robot@robot.test');
    expect(joined.state).toBe('filed');
    // an admin's retry files it past the limit, and says who let it through
    const retried = await s.admin({ method: 'POST', url: `/api/inbound-mail/${fourth.id}/retry` });
    expect(retried.status).toBe(200);
    const [filed] = await s.settled('robot-4@robot.test');
    expect(filed).toMatchObject({ state: 'filed', opened_ticket: true });
    const detail = await s.admin({ method: 'GET', url: `/api/inbound-mail/${fourth.id}` });
    expect(detail.body.released_by).toEqual(expect.any(String));
  });

  it('reopens a resolved ticket and moves a waiting one back to open', async () => {
    const resolved = await newTicket('resolved@customer.test', 'Ines <ines@customer.test>');
    expect(
      (
        await s.admin({
          method: 'POST',
          url: `/api/tickets/${resolved}/transitions`,
          payload: { status: 'resolved' },
        })
      ).status,
    ).toBe(200);
    await reply('resolved-re@customer.test', 'resolved@customer.test', 'ines@customer.test');
    expect((await ticket(resolved)).status).toBe('open');

    const waiting = await newTicket('waiting@customer.test', 'Ines <ines@customer.test>');
    await s.admin({
      method: 'POST',
      url: `/api/tickets/${waiting}/transitions`,
      payload: { status: 'waiting' },
    });
    await reply('waiting-re@customer.test', 'waiting@customer.test', 'ines@customer.test');
    expect((await ticket(waiting)).status).toBe('open');
  });

  it('starts a new ticket linked to one closed longer than INBOUND_FOLLOW_UP_AFTER_DAYS', async () => {
    const old = await newTicket('old@customer.test', 'Joana <joana@customer.test>');
    await s.pool.query(
      `update stega.tickets set status = 'closed', closed_at = now() - interval '30 days' where id = $1`,
      [old],
    );
    const receipt = await reply('old-re@customer.test', 'old@customer.test', 'joana@customer.test');
    expect(receipt.opened_ticket).toBe(true);
    expect(receipt.ticket_id).not.toBe(old);
    expect((await ticket(receipt.ticket_id)).follow_up_of).toBe(old);
    expect((await ticket(old)).status).toBe('closed');
    const mail = await s.admin({ method: 'GET', url: `/api/tickets/${receipt.ticket_id}/mail` });
    expect(mail.body.follow_up_of).toBe(old);
    expect(mail.body.other_tickets.map((t: any) => t.id)).toContain(old);
  });

  it('joins by a [#id] subject tag only when the sender is the requester or a CC', async () => {
    await s.sendRaw(
      rawMail({
        messageId: 'tag-base@customer.test',
        from: 'Luis <luis@customer.test>',
        cc: 'Marta <marta@customer.test>',
      }),
    );
    const id = (await s.settled('tag-base@customer.test'))[0].ticket_id;
    const tagged = async (messageId: string, from: string) => {
      await s.sendRaw(rawMail({ messageId, from, subject: `Re: [#${id}] still broken` }));
      return (await s.settled(messageId))[0];
    };
    expect((await tagged('tag-1@customer.test', 'luis@customer.test')).ticket_id).toBe(id);
    const fromCc = await tagged('tag-2@customer.test', 'MARTA@customer.test');
    expect(fromCc.ticket_id).toBe(id);
    const stranger = await tagged('tag-3@elsewhere.test', 'mallory@elsewhere.test');
    expect(stranger.ticket_id).not.toBe(id);
    expect(stranger.opened_ticket).toBe(true);
    // a CC's reply is public but not the requester's
    const comments = await s.pool.query(
      'select author_name, from_requester from stega.ticket_comments where ticket_id = $1 order by id',
      [id],
    );
    expect(comments.rows).toEqual([
      { author_name: 'Luis', from_requester: true },
      { author_name: 'Marta', from_requester: false },
    ]);
  });

  it("counts a customer's emailed reply as the requester reply that starts the next-reply clock", async () => {
    const calendar = await s.admin({
      method: 'POST',
      url: '/api/calendars',
      payload: { name: 'round the clock', time_zone: 'UTC', always_open: true },
    });
    const policy = await s.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: {
        name: 'Support high',
        priority: 'high',
        team_id: s.team.id,
        first_response_minutes: 60,
        resolution_minutes: 600,
        next_reply_minutes: 30,
        calendar_id: calendar.body.id,
      },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    const id = await newTicket('clock@customer.test', 'Paula <paula@customer.test>');
    const agent = await s.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ana Agent', email: 'ana@acme.test' },
    });
    const answered = await s.admin({
      method: 'POST',
      url: `/api/tickets/${id}/comments`,
      payload: { body: 'Looking into it', agent_id: agent.body.id },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(201);
    await reply('clock-re@customer.test', 'clock@customer.test', 'paula@customer.test');
    const detail = await eventually(async () => {
      const got = await s.admin({ method: 'GET', url: `/api/tickets/${id}` });
      return got.body.clocks.some((c: any) => c.kind === 'next_reply') ? got.body : undefined;
    }, 'the next-reply clock');
    const nextReply = detail.clocks.find((c: any) => c.kind === 'next_reply');
    expect(nextReply.state).toBe('running');
    expect(nextReply.target_minutes).toBe(30);
  });
});
