import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { intakeScene } from './intake-scene.js';

/** What a message carries: HTML shown sanitized, attachments kept and downloaded safely, customers. */
describe('mail content', async () => {
  const s = await intakeScene({ INBOUND_TICKET_ATTACHMENTS_MAX_BYTES: String(20 * 1024 * 1024) });
  const pixel = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  it('shows HTML sanitized: no script, no event handler, no remote image until asked; cid images inline', async () => {
    await s.transport.sendMail({
      from: 'Rui Costa <rui@customer.test>',
      to: 'support@acme.test',
      subject: 'Screenshot',
      messageId: '<html@customer.test>',
      text: 'See the screenshot.',
      html: [
        '<p onclick="steal()">Hello <b>team</b></p>',
        '<script>window.owned = true</script>',
        '<img src="x" onerror="window.owned = true">',
        '<img src="https://tracker.example.test/open.gif" alt="tracker">',
        '<img src="cid:shot@customer.test" alt="screenshot">',
        '<a href="javascript:alert(1)">click</a> <a href="https://acme.test/help">help</a>',
        '<iframe src="https://evil.example.test"></iframe><style>body{display:none}</style>',
      ].join(''),
      attachments: [{ filename: 'shot.png', content: pixel, cid: 'shot@customer.test' }],
    });
    const [receipt] = await s.settled('html@customer.test');
    expect(receipt.state).toBe('filed');
    const safe = await s.admin({ method: 'GET', url: `/api/inbound-mail/${receipt.id}/html` });
    expect(safe.status).toBe(200);
    const html: string = safe.body.html;
    expect(html).toContain('<b>team</b>');
    expect(html).not.toMatch(/script|onerror|onclick|javascript:|iframe|<style|tracker\.example/i);
    expect(html).toContain(`src="data:image/png;base64,${pixel.toString('base64')}"`);
    expect(html).toContain('rel="noopener noreferrer nofollow"');
    expect(safe.body.remote_images_blocked).toBe(1);

    const asked = await s.admin({
      method: 'GET',
      url: `/api/inbound-mail/${receipt.id}/html?remote_images=true`,
    });
    expect(asked.body.html).toContain('src="https://tracker.example.test/open.gif"');
    expect(asked.body.html).not.toMatch(/onerror|script/);
    expect(asked.body.remote_images_blocked).toBe(0);
  });

  it('keeps mail filed to no ticket for the admin: a supervisor, who sees every ticket, gets 404', async () => {
    await s.transport.sendMail({
      from: 'Rui Costa <rui@customer.test>',
      to: 'support@acme.test',
      subject: 'Out of office',
      messageId: '<ooo@customer.test>',
      headers: { 'Auto-Submitted': 'auto-replied' },
      text: 'I am away.',
      html: '<p>I am away until <b>Monday</b>.</p>',
    });
    const [receipt] = await s.settled('ooo@customer.test');
    expect(receipt).toMatchObject({ state: 'ignored', ticket_id: null });
    const agent = await s.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Sara', email: 'sara.supervisor@example.test', role: 'supervisor' },
    });
    const token = await s.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'sara', role: 'agent', agent_id: agent.body.id },
    });
    expect(token.status).toBe(201);
    // its HTML is kept for the quarantine's and the receipts' readers (its attachments are
    // stored only with a ticket)
    const url = `/api/inbound-mail/${receipt.id}/html`;
    const bySupervisor = await s.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${token.body.token}` },
    });
    expect(bySupervisor.statusCode).toBe(404);
    const byAdmin = await s.admin({ method: 'GET', url });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.html).toContain('<b>Monday</b>');
  });

  it('keeps a 15 MB attachment and gives it back byte for byte as a download, never inline', async () => {
    const big = randomBytes(15 * 1024 * 1024);
    await s.transport.sendMail({
      from: 'rui@customer.test',
      to: 'support@acme.test',
      subject: 'Big log',
      messageId: '<big-attachment@customer.test>',
      text: 'The log is attached.',
      attachments: [
        { filename: 'server log "today".html', content: big, contentType: 'text/html' },
      ],
    });
    const [receipt] = await s.settled('big-attachment@customer.test');
    expect(receipt.state).toBe('filed');
    const mail = await s.admin({ method: 'GET', url: `/api/tickets/${receipt.ticket_id}/mail` });
    const [attachment] = mail.body.messages[0].attachments;
    expect(attachment).toMatchObject({
      filename: 'server log "today".html',
      size_bytes: big.length,
      stored: true,
    });
    const download = await s.admin({
      method: 'GET',
      url: `/api/mail-attachments/${attachment.id}`,
    });
    expect(download.status).toBe(200);
    expect(download.headers['content-disposition']).toMatch(
      /^attachment; filename="server log _today_.html"/,
    );
    expect(download.headers['x-content-type-options']).toBe('nosniff');
    expect(download.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.compare(Buffer.from(download.body), big)).toBe(0);
  });

  it("keeps an attachment out, listed with the reason, once the ticket's limit is reached", async () => {
    const [first] = await s.settled('big-attachment@customer.test');
    await s.transport.sendMail({
      from: 'rui@customer.test',
      to: 'support@acme.test',
      subject: 'Re: Big log',
      messageId: '<big-attachment-2@customer.test>',
      inReplyTo: '<big-attachment@customer.test>',
      text: 'And another one.',
      attachments: [{ filename: 'more.bin', content: randomBytes(6 * 1024 * 1024) }],
    });
    const [second] = await s.settled('big-attachment-2@customer.test');
    expect(second.ticket_id).toBe(first.ticket_id);
    const mail = await s.admin({ method: 'GET', url: `/api/inbound-mail/${second.id}` });
    expect(mail.body.attachments[0]).toMatchObject({ filename: 'more.bin', stored: false });
    expect(mail.body.attachments[0].skipped_reason).toMatch(/would pass 20971520 bytes/);
    const download = await s.admin({
      method: 'GET',
      url: `/api/mail-attachments/${mail.body.attachments[0].id}`,
    });
    expect(download.status).toBe(404);
  });

  it('keeps customers by address, case-insensitively, with their tickets', async () => {
    const found = await s.admin({
      method: 'POST',
      url: '/api/customers',
      payload: { email: 'RUI@Customer.test', name: 'Someone else' },
    });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ email: 'rui@customer.test', name: 'Rui Costa' });
    const created = await s.admin({
      method: 'POST',
      url: '/api/customers',
      payload: { email: 'New@Customer.test', name: 'Nova', organisation: 'Customer Lda' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: 'new@customer.test',
      organisation: 'Customer Lda',
    });
    const detail = await s.admin({ method: 'GET', url: `/api/customers/${found.body.id}` });
    expect(detail.body.tickets.map((t: any) => t.subject)).toEqual(
      expect.arrayContaining(['Screenshot', 'Big log']),
    );
    const search = await s.admin({ method: 'GET', url: '/api/customers?q=nova' });
    expect(search.body.items.map((c: any) => c.email)).toEqual(['new@customer.test']);
    const clash = await s.admin({
      method: 'PATCH',
      url: `/api/customers/${created.body.id}`,
      payload: { email: 'rui@customer.test' },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.issues[0].path).toBe('email');
  });
});
