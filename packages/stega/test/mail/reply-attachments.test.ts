import { createHash, randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { UPLOADS_IN_FLIGHT } from '../../src/http/routes/replies.js';
import { createAgent } from '../../src/services/agents.js';
import { addTeamMember, createTeam } from '../../src/services/teams.js';
import { createToken } from '../../src/services/tokens.js';
import { intakeScene, rawMail } from './intake-scene.js';

const MB = 1024 * 1024;
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** A multipart/form-data body: text fields, then files (each a part named `files`). */
function form(
  fields: Record<string, string>,
  files: { filename: string; type: string; content: Buffer }[] = [],
) {
  const boundary = `----stega${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
      ),
    );
  }
  for (const file of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="files"; filename="${file.filename}"\r\ncontent-type: ${file.type}\r\n\r\n`,
      ),
      file.content,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Agents attach files to public replies (issue 23): posted as a form, stored in the
 * attachment store with the reply, sent as MIME parts read from there at send time, within
 * the limits received mail has (here 16 MB a message, 20 MB a ticket).
 */
describe('files attached to replies', async () => {
  const sink = await startSmtpSink();
  afterAll(() => sink.stop());
  const s = await intakeScene({
    SMTP_URL: sink.url,
    INBOUND_MAX_MESSAGE_BYTES: String(16 * MB),
    INBOUND_TICKET_ATTACHMENTS_MAX_BYTES: String(20 * MB),
  });
  const ana = await createAgent(s.ctx, { name: 'Ana Sousa', email: 'ana.sousa@acme.test' });
  await addTeamMember(s.ctx, s.team.id, ana.id);
  const anaToken = (await createToken(s.ctx, { name: 'ana', role: 'agent', agent_id: ana.id }))
    .token;
  const other = await createTeam(s.ctx, { name: 'Billing' });
  const olga = await createAgent(s.ctx, { name: 'Olga Reis', email: 'olga.reis@acme.test' });
  await addTeamMember(s.ctx, other.id, olga.id);
  const olgaToken = (await createToken(s.ctx, { name: 'olga', role: 'agent', agent_id: olga.id }))
    .token;

  const postReply = (ticketId: number, token: string, body: ReturnType<typeof form>) =>
    s.app.inject({
      method: 'POST',
      url: `/api/tickets/${ticketId}/replies`,
      headers: { ...body.headers, authorization: `Bearer ${token}` },
      payload: body.payload,
    });

  const stored = async (ticketId: number) => {
    const { rows } = await s.pool.query(
      `select (select count(*)::int from stega.mail_attachments where ticket_id = $1) as files,
              (select count(*)::int from stega.ticket_comments where ticket_id = $1) as comments`,
      [ticketId],
    );
    return rows[0] as { files: number; comments: number };
  };

  const openTicket = async (messageId: string) => {
    await s.sendRaw(rawMail({ messageId }));
    const [receipt] = await s.settled(messageId);
    expect(receipt.state).toBe('filed');
    return receipt.ticket_id as number;
  };

  const ticketId = await openTicket('printer-1@customer.test');
  const upload = randomBytes(15 * MB);

  it('emails a public reply with a 15 MB file as one message whose part is the upload', async () => {
    const answer = await postReply(
      ticketId,
      anaToken,
      form({ body: 'The driver you asked for is attached.' }, [
        { filename: 'driver.bin', type: 'application/octet-stream', content: upload },
      ]),
    );
    expect(answer.statusCode, answer.body).toBe(201);
    const comment = answer.json();
    expect(comment).toMatchObject({
      public_reply: true,
      author_agent_id: ana.id,
      attachments: [
        { filename: 'driver.bin', content_type: 'application/octet-stream', size_bytes: 15 * MB },
      ],
    });
    const messageId = comment.email.message_id as string;
    const sent = await eventually(
      () => sink.messages.find((m) => m.header('Message-ID') === messageId),
      'the reply reached the SMTP sink',
    );
    const parsed = await simpleParser(sent.raw);
    expect(parsed.text).toContain('The driver you asked for is attached.');
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['driver.bin']);
    expect(sha(parsed.attachments[0]?.content as Buffer)).toBe(sha(upload));
    // the ledger row names the file; its bytes stay in the attachment store
    const { rows } = await s.pool.query(
      `select status, length(payload::text) as size, payload -> 'attachments' as files
         from stega.alert_deliveries where alert_type = 'reply' and alert_id = $1`,
      [comment.id],
    );
    expect(rows[0]?.files).toEqual([comment.attachments[0]]);
    expect(Number(rows[0]?.size)).toBeLessThan(10_000);
    await eventually(async () => {
      const { rows: after } = await s.pool.query(
        `select status, attempts, last_error from stega.alert_deliveries where alert_type = 'reply' and alert_id = $1`,
        [comment.id],
      );
      return after[0]?.status === 'delivered' ? true : undefined;
    }, 'the reply recorded as delivered');
    expect(sink.messages.filter((m) => m.header('Message-ID') === messageId)).toHaveLength(1);

    // the team's agent downloads it, as a download; an agent of another team gets 404
    const download = await s.app.inject({
      method: 'GET',
      url: `/api/mail-attachments/${comment.attachments[0].id}`,
      headers: { authorization: `Bearer ${anaToken}` },
    });
    expect(download.statusCode).toBe(200);
    expect(sha(download.rawPayload)).toBe(sha(upload));
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="driver.bin"/);
    expect(download.headers['x-content-type-options']).toBe('nosniff');
    const hidden = await s.app.inject({
      method: 'GET',
      url: `/api/mail-attachments/${comment.attachments[0].id}`,
      headers: { authorization: `Bearer ${olgaToken}` },
    });
    expect(hidden.statusCode).toBe(404);

    // the ticket shows the reply with its file
    const ticket = await s.admin({ method: 'GET', url: `/api/tickets/${ticketId}` });
    const shown = ticket.body.comments.find((c: { id: number }) => c.id === comment.id);
    expect(shown.attachments).toEqual(comment.attachments);
  });

  it('refuses files past the per-message limit with 413, storing nothing', async () => {
    const before = await stored(ticketId);
    const answer = await postReply(
      ticketId,
      anaToken,
      form({ body: 'Two big files.' }, [
        { filename: 'a.bin', type: 'application/octet-stream', content: randomBytes(9 * MB) },
        { filename: 'b.bin', type: 'application/octet-stream', content: randomBytes(8 * MB) },
      ]),
    );
    expect(answer.statusCode, answer.body).toBe(413);
    expect(answer.json()).toMatchObject({
      code: 'STEGA_ERR_TOO_LARGE',
      issues: [{ path: 'files', message: expect.stringMatching(/most one reply may carry/) }],
    });
    expect(answer.json().message).toContain('16.0 MB');
    // the rest of the upload is left unread: the connection closes after the answer
    expect(answer.headers.connection).toBe('close');
    expect(await stored(ticketId)).toEqual(before);
  });

  it("refuses files past the ticket's limit with 413, storing nothing", async () => {
    const before = await stored(ticketId);
    const answer = await postReply(
      ticketId,
      anaToken,
      form({ body: 'One more file.' }, [
        { filename: 'c.bin', type: 'application/octet-stream', content: randomBytes(6 * MB) },
      ]),
    );
    expect(answer.statusCode, answer.body).toBe(413);
    expect(answer.json().message).toMatch(/already holds 15\.0 MB of files and may hold 20\.0 MB/);
    expect(await stored(ticketId)).toEqual(before);
  });

  it('answers an agent of another team 404 before reading the upload, storing nothing', async () => {
    const before = await stored(ticketId);
    const answer = await postReply(
      ticketId,
      olgaToken,
      form({ body: 'Not my ticket.' }, [
        { filename: 'd.txt', type: 'text/plain', content: Buffer.from('hello') },
      ]),
    );
    expect(answer.statusCode, answer.body).toBe(404);
    expect(await stored(ticketId)).toEqual(before);
  });

  it('names the field of a bad form, storing nothing', async () => {
    const before = await stored(ticketId);
    const empty = await postReply(ticketId, anaToken, form({ body: '  ' }));
    expect(empty.statusCode).toBe(400);
    expect(empty.json().issues).toEqual([{ path: 'body', message: 'must not be empty' }]);
    const stray = await postReply(
      ticketId,
      anaToken,
      form({ body: 'x', public_reply: 'yes' }, [
        { filename: 'e.txt', type: 'text/plain', content: Buffer.from('e') },
      ]),
    );
    expect(stray.statusCode).toBe(400);
    expect(stray.json().issues[0].path).toBe('public_reply');
    const json = await s.app.inject({
      method: 'POST',
      url: `/api/tickets/${ticketId}/replies`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { body: 'json' },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json().issues[0].path).toBe('(body)');
    expect(await stored(ticketId)).toEqual(before);
  });

  it('documents the form in the OpenAPI document', async () => {
    const doc = (await s.admin({ method: 'GET', url: '/api/openapi.json' })).body;
    const operation = doc.paths['/api/tickets/{id}/replies'].post;
    const form = operation.requestBody.content['multipart/form-data'].schema;
    expect(Object.keys(form.properties)).toEqual([
      'body',
      'public_reply',
      'agent_id',
      'author_name',
      'files',
    ]);
    expect(form.properties.files.items).toMatchObject({ type: 'string', format: 'binary' });
    expect(operation.responses['201']).toBeDefined();
  });

  it('keeps an internal note with a file out of the mail', async () => {
    const answer = await postReply(
      ticketId,
      anaToken,
      form({ body: 'Log for the team.', public_reply: 'false' }, [
        { filename: '../../etc/log.txt', type: 'text/plain', content: Buffer.from('log line') },
      ]),
    );
    expect(answer.statusCode, answer.body).toBe(201);
    expect(answer.json()).toMatchObject({
      public_reply: false,
      email: null,
      attachments: [{ filename: 'log.txt', content_type: 'text/plain', size_bytes: 8 }],
    });
  });

  it('gives each upload its place back when answered: many replies one after another all land', async () => {
    // UPLOADS_IN_FLIGHT is 3 per principal; a place not given back would refuse the fourth
    const noteTicket = await openTicket('printer-sequence@customer.test');
    for (let n = 0; n < UPLOADS_IN_FLIGHT + 2; n++) {
      const answer = await postReply(
        noteTicket,
        anaToken,
        form({ body: `note ${n}`, public_reply: 'false' }, [
          { filename: `log-${n}.txt`, type: 'text/plain', content: Buffer.from(`line ${n}`) },
        ]),
      );
      expect(answer.statusCode, answer.body).toBe(201);
    }
    // a refused upload (another team's ticket) gives its place back too
    for (let n = 0; n < UPLOADS_IN_FLIGHT + 1; n++) {
      const refused = await postReply(
        noteTicket,
        olgaToken,
        form({ body: 'x' }, [{ filename: 'a.txt', type: 'text/plain', content: Buffer.from('a') }]),
      );
      expect(refused.statusCode).toBe(404);
    }
  });
});
