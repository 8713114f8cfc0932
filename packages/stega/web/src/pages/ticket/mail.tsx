import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api.js';
import { Section } from '../../components/layout.js';
import { getQuery } from '../../data/queries.js';
import { formatDateTime, label } from '../../format.js';
import { readToken } from '../../session.js';

/** GET /api/tickets/:id/mail. */
interface TicketMail {
  /** The mailbox the ticket's mail goes through; null: public replies are not emailed. */
  mailbox_id: number | null;
  customer: { id: number; name: string; email: string; organisation: string | null } | null;
  follow_up_of: number | null;
  other_tickets: { id: number; subject: string; status: string; created_at: string }[];
  ccs: { email: string; name: string }[];
  messages: {
    id: number;
    from_address: string | null;
    from_name: string | null;
    subject: string | null;
    received_at: string;
    source: string;
    state: string;
    reason: string | null;
    has_html: boolean;
    attachments: {
      id: number;
      filename: string;
      size_bytes: number;
      stored: boolean;
      skipped_reason: string | null;
      inline: boolean;
    }[];
  }[];
}

/** Downloads with the session's token (a plain link would carry none). */
export async function download(id: number, filename: string): Promise<void> {
  const response = await fetch(`/api/mail-attachments/${id}`, {
    headers: { authorization: `Bearer ${readToken() ?? ''}` },
  });
  if (!response.ok) return;
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.click();
  URL.revokeObjectURL(url);
}

/**
 * The ticket's mail: its customer and their other tickets, the CCs, and every message
 * received, live. A message's HTML is the server's sanitized copy, shown in a sandboxed frame
 * (no script may run there) whose policy loads images only from the message itself until the
 * reader asks for the remote ones.
 */
/** A ticket's mail: its mailbox, customer, CCs and the messages received (refetched). */
export function useTicketMail(ticketId: number) {
  return useQuery({
    ...getQuery<TicketMail>(['tickets', ticketId, 'mail'], `/api/tickets/${ticketId}/mail`),
    refetchInterval: 10_000,
  });
}

export function MailSection({ ticketId }: { ticketId: number }) {
  const mail = useTicketMail(ticketId);
  const m = mail.data;
  if (!m || (m.messages.length === 0 && !m.customer)) return null;
  return (
    <Section fold id="mail" title={`Mail (${m.messages.length})`}>
      {m.customer ? (
        <p data-testid="customer">
          Customer: {m.customer.name || m.customer.email} &lt;{m.customer.email}&gt;
          {m.customer.organisation ? `, ${m.customer.organisation}` : ''}
        </p>
      ) : null}
      {m.follow_up_of ? (
        <p>
          Follows up <Link to={`/tickets/${m.follow_up_of}`}>ticket #{m.follow_up_of}</Link>.
        </p>
      ) : null}
      {m.ccs.length > 0 ? (
        <p>CC: {m.ccs.map((cc) => (cc.name ? `${cc.name} <${cc.email}>` : cc.email)).join(', ')}</p>
      ) : null}
      {m.other_tickets.length > 0 ? (
        <>
          <h3>The customer’s other tickets</h3>
          <ul>
            {m.other_tickets.map((t) => (
              <li key={t.id}>
                <Link to={`/tickets/${t.id}`}>
                  #{t.id} {t.subject}
                </Link>{' '}
                <span className="muted">({label(t.status)})</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {m.messages.map((message) => (
        <article key={message.id} className="card" aria-label={`Message ${message.id}`}>
          <h3>{message.subject ?? '(no subject)'}</h3>
          <p className="muted">
            From{' '}
            {message.from_name
              ? `${message.from_name} <${message.from_address}>`
              : message.from_address}{' '}
            · {formatDateTime(message.received_at)} · by {message.source.toUpperCase()} ·{' '}
            {label(message.state)}
            {message.reason ? ` (${message.reason})` : ''}
          </p>
          {message.attachments.length > 0 ? (
            <ul>
              {message.attachments.map((a) => (
                <li key={a.id}>
                  {a.stored ? (
                    <button
                      type="button"
                      className="link-button"
                      onClick={() => void download(a.id, a.filename)}
                    >
                      {a.filename}
                    </button>
                  ) : (
                    a.filename
                  )}{' '}
                  <span className="muted">
                    {Math.ceil(a.size_bytes / 1024)} KB
                    {a.skipped_reason ? `, not kept: ${a.skipped_reason}` : ''}
                  </span>
                </li>
              ))}
            </ul>
          ) : null}
          {message.has_html ? <FormattedMessage id={message.id} /> : null}
        </article>
      ))}
    </Section>
  );
}

function FormattedMessage({ id }: { id: number }) {
  const [open, setOpen] = useState(false);
  const [remote, setRemote] = useState(false);
  const html = useQuery({
    queryKey: ['inbound-mail', id, 'html', remote],
    queryFn: () =>
      api<{ html: string; remote_images_blocked: number }>(
        'GET',
        `/api/inbound-mail/${id}/html${remote ? '?remote_images=true' : ''}`,
      ),
    enabled: open,
  });
  if (!open) {
    return (
      <button type="button" className="secondary small" onClick={() => setOpen(true)}>
        Show the formatted message
      </button>
    );
  }
  const images = remote ? 'data: https: http:' : 'data:';
  const srcDoc = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${images}; style-src 'unsafe-inline'"><base target="_blank">${html.data?.html ?? ''}`;
  return (
    <div>
      {html.data && html.data.remote_images_blocked > 0 && !remote ? (
        <p>
          {html.data.remote_images_blocked} remote image(s) not loaded (loading them tells the
          sender you read this).{' '}
          <button type="button" className="secondary small" onClick={() => setRemote(true)}>
            Load remote images
          </button>
        </p>
      ) : null}
      <iframe
        title={`Formatted message ${id}`}
        sandbox="allow-popups allow-popups-to-escape-sandbox"
        srcDoc={srcDoc}
        style={{ width: '100%', minHeight: '16rem', border: '1px solid #ccc', background: '#fff' }}
      />
    </div>
  );
}
