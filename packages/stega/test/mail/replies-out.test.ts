import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { AlertDelivery } from '../../src/delivery/alert-delivery.js';
import { startDeliveryRetrier } from '../../src/delivery/retrier.js';
import { createEmailSender, emailEndpointOf } from '../../src/delivery/transport/smtp.js';
import { createLogger } from '../../src/log.js';
import { replyAddress, replySecretLoad } from '../../src/mail/reply-token.js';
import { createAgent } from '../../src/services/agents.js';
import { createToken } from '../../src/services/tokens.js';
import { intakeScene, rawMail } from './intake-scene.js';
import { startScriptedSmtp } from './scripted-smtp.js';

/**
 * Replies out (issue 23) with the real protocols: customers write to Stega's SMTP listener,
 * agents answer through the API, and Stega's emails reach a real SMTP receiver whose answers
 * the tests script. An sla-breach-worker's retry loop runs beside, as in production.
 */
describe('replies out', async () => {
  const smtp = await startScriptedSmtp();
  afterAll(() => smtp.stop());
  const s = await intakeScene({ SMTP_URL: smtp.url, SLA_RETRY_TIME_SCALE: '0.02' });
  const agent = await createAgent(s.ctx, { name: 'Ana Sousa', email: 'ana.sousa@acme.test' });
  const secret = await replySecretLoad(s.pool);
  // an sla-breach-worker's retry loop: it sends again what a first attempt did not deliver
  const retryEmail = createEmailSender({ smtpUrl: smtp.url, from: 'x@y', mailDir: '/nonexistent' });
  const retrier = startDeliveryRetrier({
    pool: s.pool,
    delivery: new AlertDelivery({
      pool: s.pool,
      email: retryEmail,
      emailEndpoint: emailEndpointOf(smtp.url),
      webhookTimeoutMs: 2000,
      publicUrl: 'https://help.example.test',
      deliveredBy: 'retrier',
      timeScale: 0.02,
      circuitFailures: 50,
      circuitProbeSeconds: 10,
    }),
    concurrency: 4,
    pollMs: 50,
    probeSeconds: 0.2,
    logger: createLogger('silent', 'test'),
  });
  afterAll(async () => {
    await retrier.stop();
    retryEmail.close();
  });

  /** The ledger rows of a ticket's emails, once none is being sent or waiting for a retry. */
  const settledEmails = (ticketId: number) =>
    eventually(async () => {
      const { rows } = await s.pool.query(
        `select id, alert_type, alert_id, recipient, status, attempts, payload
           from stega.alert_deliveries where ticket_id = $1 and channel = 'customer_email'
          order by id`,
        [ticketId],
      );
      return rows.every((r) => !['sending', 'retrying', 'pending'].includes(r.status))
        ? rows
        : undefined;
    }, `the emails of ticket ${ticketId} settled`);

  /** A new ticket from `from`, by mail; resolves once its acknowledgement (if any) settled. */
  const openTicket = async (messageId: string, from: string, extra: { cc?: string } = {}) => {
    await s.sendRaw(rawMail({ messageId, from, ...extra }), {
      from: from.replace(/^.*<|>$/g, ''),
    });
    const [receipt] = await s.settled(messageId);
    expect(receipt.state).toBe('filed');
    const ticketId = receipt.ticket_id as number;
    await settledEmails(ticketId);
    return ticketId;
  };

  const reply = async (ticketId: number, body: string) => {
    const answer = await s.admin({
      method: 'POST',
      url: `/api/tickets/${ticketId}/comments`,
      payload: { body, agent_id: agent.id },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body as { id: number; email: { id: number; message_id: string; state: string } };
  };

  const commentEmail = async (ticketId: number, commentId: number) => {
    const ticket = (await s.admin({ method: 'GET', url: `/api/tickets/${ticketId}` })).body;
    return ticket.comments.find((c: { id: number }) => c.id === commentId).email;
  };

  it('emails a public reply from the mailbox with its threading headers; the answer joins the ticket', async () => {
    const ticketId = await openTicket('vpn-1@customer.test', 'Rui Costa <rui@customer.test>', {
      cc: 'Ana Lima <ana@customer.test>',
    });
    const posted = await reply(ticketId, 'We reset your VPN profile.\n\nPlease try again.');
    expect(['sending', 'delivered']).toContain(posted.email.state);
    const [row] = (await settledEmails(ticketId)).filter((r) => r.alert_type === 'reply');
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, recipient: 'rui@customer.test' });

    const sent = smtp.withMessageId(posted.email.message_id);
    expect(sent).toHaveLength(1);
    const mail = sent[0]?.parsed;
    expect(mail?.from?.value).toEqual([
      { name: 'Ana Sousa at Acme Support', address: 'support@acme.test' },
    ]);
    expect(mail?.to && !Array.isArray(mail.to) ? mail.to.value : []).toEqual([
      { name: 'Rui Costa', address: 'rui@customer.test' },
    ]);
    expect(mail?.cc && !Array.isArray(mail.cc) ? mail.cc.value : []).toEqual([
      { name: 'Ana Lima', address: 'ana@customer.test' },
    ]);
    const replyTo = replyAddress(secret, 'support@acme.test', ticketId);
    expect(mail?.replyTo?.value).toEqual([{ name: 'Acme Support', address: replyTo }]);
    expect(mail?.messageId).toMatch(/^<stega\.reply\.\d+\.\d+\.[0-9a-f]{16}@acme\.test>$/);
    expect(mail?.inReplyTo).toBe('<vpn-1@customer.test>');
    // the conversation: the customer's message, then the acknowledgement Stega sent
    expect(mail?.references).toEqual([
      '<vpn-1@customer.test>',
      expect.stringMatching(/^<stega\.acknowledgement\.\d+\.\d+\.[0-9a-f]{16}@acme\.test>$/),
    ]);
    expect(mail?.subject).toBe(`Re: VPN is down [#${ticketId}]`);
    expect(mail?.text).toContain('We reset your VPN profile.');
    expect(mail?.html).toContain('<p>We reset your VPN profile.</p>');
    expect(sent[0]?.envelopeFrom).toBe('support@acme.test');
    expect([...(sent[0]?.envelopeTo ?? [])].sort()).toEqual([
      'ana@customer.test',
      'rui@customer.test',
    ]);
    const email = await commentEmail(ticketId, posted.id);
    expect(email).toMatchObject({
      state: 'delivered',
      from: 'Ana Sousa at Acme Support <support@acme.test>',
      to: ['rui@customer.test'],
      cc: ['ana@customer.test'],
      attempts: 1,
      last_outcome: { type: 'delivered' },
    });
    expect(email.sent_at).not.toBeNull();

    // the customer's client answers with In-Reply-To: the answer is the requester's comment
    await s.sendRaw(
      rawMail({
        messageId: 'vpn-2@customer.test',
        subject: `Re: VPN is down [#${ticketId}]`,
        headers: [
          `In-Reply-To: ${posted.email.message_id}`,
          `References: <vpn-1@customer.test> ${posted.email.message_id}`,
        ],
        body: [
          'Works now, thanks.',
          '',
          `On Mon, 2 Mar 2026 at 10:02, Ana Sousa at Acme Support <support@acme.test> wrote:`,
          '> We reset your VPN profile.',
          '>',
          '> Please try again.',
        ].join('\r\n'),
      }),
    );
    const [answer] = await s.settled('vpn-2@customer.test');
    expect(answer).toMatchObject({
      state: 'filed',
      ticket_id: ticketId,
      reason: 'joined by in-reply-to',
    });
    // one that dropped every threading header still finds the ticket by its Reply-To address
    await s.sendRaw(
      rawMail({ messageId: 'vpn-3@customer.test', to: replyTo, subject: 'one more thing' }),
      { to: [replyTo] },
    );
    expect((await s.settled('vpn-3@customer.test'))[0]).toMatchObject({
      state: 'filed',
      ticket_id: ticketId,
      reason: 'joined by token',
    });
    const { rows } = await s.pool.query(
      `select body, from_requester from stega.ticket_comments where ticket_id = $1 order by id`,
      [ticketId],
    );
    expect(rows).toEqual([
      { body: 'We reset your VPN profile.\n\nPlease try again.', from_requester: false },
      {
        body: expect.stringMatching(
          /^Works now, thanks\.\n\nOn Mon, 2 Mar 2026 .* wrote:\n> We reset/,
        ),
        from_requester: true,
      },
      { body: 'Since this morning nobody can connect.', from_requester: true },
    ]);
    // the ticket view folds what the customer's client quoted of the reply
    const view = (await s.admin({ method: 'GET', url: `/api/tickets/${ticketId}` })).body;
    const answered = view.comments[1];
    expect(answered.body.slice(0, answered.quoted_from).trim()).toBe('Works now, thanks.');
    expect(answered.body.slice(answered.quoted_from)).toMatch(/^On Mon, 2 Mar 2026 .* wrote:/);
    expect(view.comments[0]).toMatchObject({ quoted_from: null });
  });

  it('starts a conversation from the new-ticket form: the description is emailed, the answer threads in', async () => {
    const { token } = await createToken(s.ctx, { name: 'Ana', role: 'agent', agent_id: agent.id });
    const asAna = (method: 'GET' | 'POST', url: string, payload?: object) =>
      s.app.inject({ method, url, payload, headers: { authorization: `Bearer ${token}` } });
    const addresses = await asAna('GET', '/api/mailbox-addresses');
    expect(addresses.statusCode).toBe(200);
    expect(addresses.json().items).toEqual([
      {
        id: s.mailbox.id,
        address: 'support@acme.test',
        display_name: 'Acme Support',
        team_id: s.team.id,
        priority: 'high',
      },
    ]);
    // no mailbox settings for an agent
    expect((await asAna('GET', `/api/mailboxes/${s.mailbox.id}`)).statusCode).toBe(403);

    const base = {
      subject: 'Your replacement laptop',
      requester_name: 'Marta Reis',
      requester_email: 'Marta.Reis@customer.test',
    };
    // the message is the point: none, or an unknown mailbox, is a 400 naming the field
    const empty = await asAna('POST', '/api/tickets', { ...base, mailbox_id: s.mailbox.id });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().issues).toEqual([
      { path: 'description', message: expect.stringMatching(/first email to the requester/) },
    ]);
    const unknown = await asAna('POST', '/api/tickets', {
      ...base,
      description: 'Hello',
      mailbox_id: 999_999,
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().issues[0].path).toBe('mailbox_id');

    const created = await asAna('POST', '/api/tickets', {
      ...base,
      description: 'Your laptop ships today.\n\nReply to this email with your address.',
      mailbox_id: s.mailbox.id,
    });
    expect(created.statusCode, created.body).toBe(201);
    const ticket = created.json();
    // the mailbox's team and priority, assigned to the writer; the first response is the email
    expect(ticket).toMatchObject({ team_id: s.team.id, priority: 'high', assignee_id: agent.id });
    expect(ticket.first_responded_at).not.toBeNull();
    const [row] = await settledEmails(ticket.id);
    expect(row).toMatchObject({
      status: 'delivered',
      attempts: 1,
      recipient: 'marta.reis@customer.test',
    });
    const first = ticket.comments[0];
    const sent = smtp.withMessageId(first.email.message_id);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.parsed.from?.value).toEqual([
      { name: 'Ana Sousa at Acme Support', address: 'support@acme.test' },
    ]);
    expect(sent[0]?.parsed.subject).toBe(`Your replacement laptop [#${ticket.id}]`);
    expect(sent[0]?.parsed.inReplyTo).toBeUndefined();
    expect(sent[0]?.parsed.text).toContain('Your laptop ships today.');

    // Marta answers: her reply joins the ticket as the requester's
    await s.sendRaw(
      rawMail({
        from: 'Marta Reis <marta.reis@customer.test>',
        messageId: 'laptop-1@customer.test',
        subject: `Re: Your replacement laptop [#${ticket.id}]`,
        headers: [`In-Reply-To: ${first.email.message_id}`],
        body: 'Rua das Flores 12, Porto.',
      }),
      { from: 'marta.reis@customer.test' },
    );
    expect((await s.settled('laptop-1@customer.test'))[0]).toMatchObject({
      state: 'filed',
      ticket_id: ticket.id,
      reason: 'joined by in-reply-to',
    });
    const { rows: customers } = await s.pool.query(
      `select c.email from stega.tickets t join stega.customers c on c.id = t.customer_id where t.id = $1`,
      [ticket.id],
    );
    expect(customers).toEqual([{ email: 'marta.reis@customer.test' }]);
  });

  it('sends a reply the receiver put off (451) again, and delivers it once', async () => {
    const ticketId = await openTicket('later-1@customer.test', 'Lia <lia@customer.test>');
    smtp.refuseData(451, '4.3.0 Try again later');
    const before = smtp.dataAnswers();
    const posted = await reply(ticketId, 'Looking into it.');
    const [row] = (await settledEmails(ticketId)).filter((r) => r.alert_type === 'reply');
    expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(smtp.dataAnswers() - before).toBe(2);
    expect(smtp.withMessageId(posted.email.message_id)).toHaveLength(1);
    const email = await commentEmail(ticketId, posted.id);
    expect(email.state).toBe('delivered');
    // it waited once: when it first failed is kept
    expect(email.retrying_since).not.toBeNull();
  });

  it('fails a reply the receiver refuses (550) for good, shows why, and sends it again when asked', async () => {
    const ticketId = await openTicket('gone-1@customer.test', 'Gone <gone@customer.test>');
    smtp.refuseRecipient('gone@customer.test', 550, '5.1.1 <gone@customer.test>: user unknown');
    const posted = await reply(ticketId, 'Here is your answer.');
    const [row] = (await settledEmails(ticketId)).filter((r) => r.alert_type === 'reply');
    expect(row).toMatchObject({ status: 'failed_permanent', attempts: 1 });
    const email = await commentEmail(ticketId, posted.id);
    expect(email).toMatchObject({
      state: 'failed_permanent',
      last_outcome: { type: 'failed', kind: 'smtp', reply: 550 },
      next_attempt_at: null,
    });
    expect(email.last_error).toMatch(/^permanent: .*550.*user unknown/);
    expect(smtp.withMessageId(posted.email.message_id)).toHaveLength(0);

    // the address works again (the customer fixed their mailbox): the agent sends it again
    smtp.acceptRecipient('gone@customer.test');
    const retried = await s.admin({
      method: 'POST',
      url: `/api/tickets/${ticketId}/emails/${email.id}/retry`,
    });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    const [again] = (await settledEmails(ticketId)).filter((r) => r.alert_type === 'reply');
    expect(again).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(smtp.withMessageId(posted.email.message_id)).toHaveLength(1);
    const twice = await s.admin({
      method: 'POST',
      url: `/api/tickets/${ticketId}/emails/${email.id}/retry`,
    });
    expect(twice.status).toBe(409);
  });

  /** A delivery status notification from the customer's mail server about `original`. */
  const dsn = (fields: {
    messageId: string;
    original: string;
    recipient: string;
    status: string;
    action?: string;
  }) =>
    [
      'From: Mail Delivery System <MAILER-DAEMON@mx.customer.test>',
      'To: support@acme.test',
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <${fields.messageId}>`,
      'Date: Mon, 02 Mar 2026 09:05:00 +0000',
      'Auto-Submitted: auto-replied',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status;',
      '\tboundary="dsn-boundary"',
      '',
      'This is a MIME-encapsulated message.',
      '',
      '--dsn-boundary',
      'Content-Type: text/plain; charset=us-ascii',
      '',
      'I am sorry to have to inform you that your message could not be delivered.',
      '',
      '--dsn-boundary',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.customer.test',
      '',
      `Final-Recipient: rfc822; ${fields.recipient}`,
      `Action: ${fields.action ?? 'failed'}`,
      `Status: ${fields.status}`,
      `Diagnostic-Code: smtp; 550 ${fields.status} <${fields.recipient}>: Recipient address`,
      '    rejected: User unknown in virtual mailbox table',
      '',
      '--dsn-boundary',
      'Content-Type: text/rfc822-headers',
      '',
      'From: Acme Support <support@acme.test>',
      `Message-ID: ${fields.original}`,
      'Subject: Re: VPN is down',
      '',
      '--dsn-boundary--',
      '',
    ].join('\r\n');
  const bounce = async (fields: Parameters<typeof dsn>[0]) => {
    await s.sendRaw(dsn(fields), { from: 'mailer-daemon@mx.customer.test' });
    return (await s.settled(fields.messageId))[0];
  };

  it('fails a delivered reply when a bounce (DSN) for it comes back, and files no message', async () => {
    const ticketId = await openTicket('moved-1@customer.test', 'Moved <moved@customer.test>', {
      cc: 'cc-gone@customer.test',
    });
    const tickets = Number(
      (await s.pool.query('select count(*) from stega.tickets')).rows[0].count,
    );
    const posted = await reply(ticketId, 'Answer that will bounce.');
    await settledEmails(ticketId);
    expect((await commentEmail(ticketId, posted.id)).state).toBe('delivered');

    // a CC's mailbox is gone: the reply still reached the requester
    const copy = await bounce({
      messageId: 'dsn-cc@mx.customer.test',
      original: posted.email.message_id,
      recipient: 'cc-gone@customer.test',
      status: '5.1.1',
    });
    expect(copy).toMatchObject({ state: 'ignored', ticket_id: ticketId, opened_ticket: false });
    expect(copy.reason).toMatch(/^bounce of the reply of comment \d+ for a CC only: cc-gone@/);
    const noted = await commentEmail(ticketId, posted.id);
    expect(noted.state).toBe('delivered');
    expect(noted.last_error).toContain('delivered, but a copy bounced: cc-gone@customer.test');

    const gone = await bounce({
      messageId: 'dsn-1@mx.customer.test',
      original: posted.email.message_id,
      recipient: 'moved@customer.test',
      status: '5.1.1',
    });
    expect(gone).toMatchObject({ state: 'ignored', ticket_id: ticketId, opened_ticket: false });
    expect(gone.reason).toContain('bounce of the reply of comment');
    const email = await commentEmail(ticketId, posted.id);
    expect(email).toMatchObject({
      state: 'failed_permanent',
      last_outcome: { type: 'failed', kind: 'bounced', dsn_status: '5.1.1' },
      sent_at: null,
    });
    expect(email.last_error).toMatch(/^bounced: moved@customer\.test \(5\.1\.1 550 .*User unknown/);
    // the ticket's activity says so, once, with the typed failure (not the server's words)
    const failed = await s.pool.query(
      `select details from stega.ticket_activity
        where ticket_id = $1 and action = 'delivery_failed'`,
      [ticketId],
    );
    expect(failed.rows.map((r) => r.details)).toEqual([
      expect.objectContaining({
        channel: 'customer_email',
        target: 'moved@customer.test',
        reason: 'rejected',
        outcome: { type: 'failed', kind: 'bounced', dsn_status: '5.1.1' },
      }),
    ]);

    // a bounce of mail Stega never sent is kept, and is no ticket either
    const stray = await bounce({
      messageId: 'dsn-2@mx.customer.test',
      original: '<not-ours@elsewhere.test>',
      recipient: 'moved@customer.test',
      status: '5.1.1',
    });
    expect(stray).toMatchObject({ state: 'ignored', ticket_id: null });
    expect(stray.reason).toBe(
      'delivery status notification about no email Stega sent (not-ours@elsewhere.test)',
    );
    const after = await s.pool.query('select count(*) from stega.tickets');
    expect(Number(after.rows[0].count)).toBe(tickets);
    const comments = await s.pool.query(
      'select count(*) from stega.ticket_comments where ticket_id = $1',
      [ticketId],
    );
    expect(Number(comments.rows[0].count)).toBe(1);
  });

  it('sends a reply again when its bounce is temporary (4.x.x)', async () => {
    const ticketId = await openTicket('full-1@customer.test', 'Full <full@customer.test>');
    const posted = await reply(ticketId, 'Your mailbox seems full.');
    await settledEmails(ticketId);
    const receipt = await bounce({
      messageId: 'dsn-full@mx.customer.test',
      original: posted.email.message_id,
      recipient: 'full@customer.test',
      status: '4.2.2',
    });
    expect(receipt.reason).toContain('bounce of the reply');
    const [row] = (await settledEmails(ticketId)).filter((r) => r.alert_type === 'reply');
    expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(smtp.withMessageId(posted.email.message_id)).toHaveLength(2);
  });

  it('acknowledges a new ticket once, and never an automatic message, a machine or a loop', async () => {
    await s.sendRaw(
      rawMail({
        messageId: 'ack-1@customer.test',
        from: 'Nia <nia@customer.test>',
        subject: 'Printer on fire',
      }),
      { from: 'nia@customer.test' },
    );
    const [first] = await s.settled('ack-1@customer.test');
    const ticketId = first.ticket_id as number;
    const [row] = await settledEmails(ticketId);
    expect(row).toMatchObject({
      alert_type: 'acknowledgement',
      alert_id: ticketId,
      status: 'delivered',
    });
    const acks = smtp.accepted.filter((m) => m.envelopeTo.includes('nia@customer.test'));
    expect(acks).toHaveLength(1);
    const ack = acks[0]?.parsed;
    expect(ack?.headers.get('auto-submitted')).toBe('auto-replied');
    expect(ack?.from?.value).toEqual([{ name: 'Acme Support', address: 'support@acme.test' }]);
    expect(ack?.subject).toBe(`Re: Printer on fire [#${ticketId}]`);
    expect(ack?.inReplyTo).toBe('<ack-1@customer.test>');
    expect(ack?.replyTo?.value[0]?.address).toBe(
      replyAddress(secret, 'support@acme.test', ticketId),
    );
    expect(ack?.text).toContain(`ticket #${ticketId}`);
    const ticket = (await s.admin({ method: 'GET', url: `/api/tickets/${ticketId}` })).body;
    expect(ticket.acknowledgement).toMatchObject({ kind: 'acknowledgement', state: 'delivered' });

    const acknowledged = async (address: string) =>
      Number(
        (
          await s.pool.query(
            `select count(*) from stega.alert_deliveries
              where alert_type = 'acknowledgement' and recipient = $1`,
            [address],
          )
        ).rows[0].count,
      );
    // an out-of-office answer to it, marked as such: no ticket, no acknowledgement
    await s.sendRaw(
      rawMail({
        messageId: 'ooo-1@customer.test',
        from: 'Ooo <ooo@customer.test>',
        headers: ['Auto-Submitted: auto-replied'],
      }),
      { from: 'ooo@customer.test' },
    );
    expect((await s.settled('ooo-1@customer.test'))[0]).toMatchObject({
      state: 'ignored',
      ticket_id: null,
    });
    expect(await acknowledged('ooo@customer.test')).toBe(0);
    // an auto-responder that marks nothing and starts a new thread: a ticket, but the sender
    // was acknowledged a moment ago, so the loop ends here
    await s.sendRaw(
      rawMail({
        messageId: 'ack-2@customer.test',
        from: 'Nia <nia@customer.test>',
        subject: `I am away (was: Re: Printer on fire [#${ticketId}])`.replace(
          `[#${ticketId}]`,
          '',
        ),
      }),
      { from: 'nia@customer.test' },
    );
    const [loop] = await s.settled('ack-2@customer.test');
    expect(loop).toMatchObject({ state: 'filed', opened_ticket: true });
    expect(await acknowledged('nia@customer.test')).toBe(1);
    // machines get none
    await openTicket('pm-1@customer.test', 'postmaster@customer.test');
    expect(await acknowledged('postmaster@customer.test')).toBe(0);
    // nor anyone when the mailbox turns them off
    const off = await s.admin({
      method: 'PATCH',
      url: `/api/mailboxes/${s.mailbox.id}`,
      payload: { acknowledge: false },
    });
    expect(off.body).toMatchObject({ acknowledge: false });
    await openTicket('quiet-1@customer.test', 'Quiet <quiet@customer.test>');
    expect(await acknowledged('quiet@customer.test')).toBe(0);
    await s.admin({
      method: 'PATCH',
      url: `/api/mailboxes/${s.mailbox.id}`,
      payload: { acknowledge: true },
    });
    expect(smtp.accepted.filter((m) => m.envelopeTo.includes('nia@customer.test'))).toHaveLength(1);
  });
});
