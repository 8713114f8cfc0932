import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ApiError, api, type Issue } from '../../api.js';
import { Field } from '../../components/field.js';
import { CheckField } from '../../components/form-fields.js';
import { Section } from '../../components/layout.js';
import { agentsQuery } from '../../data/queries.js';
import { formatDateTime } from '../../format.js';
import { useOlderPages } from '../../hooks/use-older-pages.js';
import type { Session, TicketDetail } from '../../types.js';
import { EmailState } from './email-state.js';
import { download, useTicketMail } from './mail.js';

export function Conversation({
  ticket,
  session,
  onAdded,
}: {
  ticket: TicketDetail;
  session: Session;
  onAdded: () => void;
}) {
  const [body, setBody] = useState('');
  const [publicReply, setPublicReply] = useState(true);
  const [files, setFiles] = useState<File[]>([]);
  // a new input after each reply: a file input cannot be emptied by its value
  const [pickerKey, setPickerKey] = useState(0);
  const [issues, setIssues] = useState<Issue[]>([]);
  const [busy, setBusy] = useState(false);
  // a token of no agent (the configured admin token) picks the agent it writes as
  const picksAgent = session.agent_id === null;
  const agents = useQuery({ ...agentsQuery(), enabled: picksAgent, refetchInterval: 60_000 });
  const [chosen, setChosen] = useState<string | undefined>(() => readReplyAs());
  const agentList = agents.data?.items ?? [];
  // the one replying is the token's holder, no agent, until they pick one (never the first
  // agent in the list, who would be answering without knowing it)
  const replyAs =
    chosen !== undefined && agentList.some((a) => String(a.id) === chosen) ? chosen : '';
  const replyAgent = agentList.find((a) => String(a.id) === replyAs);
  // a ticket of no mailbox (made here or by the API) has nobody to email a public reply to
  const mail = useTicketMail(ticket.id);
  const emailed = mail.data ? mail.data.mailbox_id !== null : true;
  // the ticket brings its newest comments; older ones come a page at a time
  const thread = useOlderPages({
    latest: ticket.comments,
    latestNextCursor: ticket.comments_next_cursor,
    path: `/api/tickets/${ticket.id}/comments`,
    at: (c) => c.created_at,
  });
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setIssues([]);
    try {
      const agentId = picksAgent && replyAs !== '' ? Number(replyAs) : undefined;
      if (files.length > 0) {
        // with files: one form, stored with the comment in one transaction
        const form = new FormData();
        form.append('body', body);
        form.append('public_reply', String(publicReply));
        if (agentId !== undefined) form.append('agent_id', String(agentId));
        for (const file of files) form.append('files', file, file.name);
        await api('POST', `/api/tickets/${ticket.id}/replies`, form);
      } else {
        await api(
          'POST',
          `/api/tickets/${ticket.id}/comments`,
          // customer replies arrive through an integration (comments:requester), never from here
          {
            body,
            public_reply: publicReply,
            ...(agentId !== undefined ? { agent_id: agentId } : {}),
          },
        );
      }
      setBody('');
      setFiles([]);
      setPickerKey((k) => k + 1);
      onAdded();
    } catch (error) {
      setIssues(issuesOf(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section id="conversation" title={`Conversation (${ticket.comments_total})`}>
      <form onSubmit={submit} noValidate className="form">
        {picksAgent ? (
          <Field
            path="agent_id"
            label="Reply as"
            issues={issues}
            className="reply-as"
            hint={
              replyAgent
                ? `As ${replyAgent.name}: the first public reply is the ticket’s first response.`
                : 'As no agent: a comment of yours is not a first response.'
            }
          >
            {(aria) => (
              <select
                {...aria}
                value={replyAs}
                onChange={(e) => {
                  setChosen(e.target.value);
                  saveReplyAs(e.target.value);
                }}
              >
                {agentList.map((a) => (
                  <option key={a.id} value={String(a.id)}>
                    {a.name}
                  </option>
                ))}
                <option value="">No agent ({session.name})</option>
              </select>
            )}
          </Field>
        ) : null}
        <Field
          path="body"
          label="Add a comment"
          issues={issues}
          hint={picksAgent ? undefined : 'Your first public reply is the ticket’s first response.'}
        >
          {(aria) => (
            <textarea {...aria} rows={3} value={body} onChange={(e) => setBody(e.target.value)} />
          )}
        </Field>
        <Field
          path="files"
          label="Attach files"
          issues={issues}
          hint={
            files.length === 0
              ? publicReply
                ? emailed
                  ? 'They go with the email to the requester.'
                  : 'They stay with the reply on the ticket.'
                : 'They stay with the note, for agents only.'
              : undefined
          }
        >
          {(aria) => (
            <input
              {...aria}
              key={pickerKey}
              type="file"
              multiple
              onChange={(e) => {
                const picked = [...(e.target.files ?? [])];
                setFiles((before) => [
                  ...before.filter((f) => !picked.some((p) => p.name === f.name)),
                  ...picked,
                ]);
                setIssues((before) => before.filter((i) => i.path !== 'files'));
              }}
            />
          )}
        </Field>
        {files.length > 0 ? (
          <ul className="chosen-files" aria-label="Files to attach">
            {files.map((f) => (
              <li key={f.name}>
                {f.name} <span className="small muted">({sizeInWords(f.size)})</span>{' '}
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Remove ${f.name}`}
                  onClick={() => setFiles((before) => before.filter((x) => x !== f))}
                >
                  Remove
                </button>
              </li>
            ))}
            {files.length > 1 ? (
              <li className="small muted">
                {files.length} files, {sizeInWords(files.reduce((n, f) => n + f.size, 0))} in all
              </li>
            ) : null}
          </ul>
        ) : null}
        <CheckField checked={publicReply} onChange={setPublicReply}>
          Public reply (visible to the requester)
        </CheckField>
        {publicReply && !emailed ? (
          <p className="hint" data-testid="not-emailed">
            This ticket came through no mailbox, so a public reply is not emailed to{' '}
            {ticket.requester_email}: it counts as your answer here only. To write to a customer by
            email, start the ticket from a mailbox (New ticket, “Email the requester from”).
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Add comment
          </button>
        </div>
      </form>
      <ol className="comments" aria-label="Thread, newest first">
        {thread.items.map((c) => (
          <li key={c.id} className={c.public_reply ? 'reply' : 'note'}>
            <p className="small muted">
              <strong>{c.author_name}</strong> · {formatDateTime(c.created_at)}
              {c.from_requester ? (
                ' · from the requester'
              ) : c.public_reply ? (
                ' · reply to the requester'
              ) : (
                <>
                  {' · '}
                  <span className="note-tag">Internal note (agents only)</span>
                </>
              )}
            </p>
            <CommentBody body={c.body} quotedFrom={c.quoted_from ?? null} />
            {c.attachments && c.attachments.length > 0 ? (
              <ul className="attachments" aria-label="Attached files">
                {c.attachments.map((a) => (
                  <li key={a.id}>
                    <button
                      type="button"
                      className="link-button"
                      onClick={() => void download(a.id, a.filename)}
                    >
                      {a.filename}
                    </button>{' '}
                    <span className="small muted">({sizeInWords(a.size_bytes)})</span>
                  </li>
                ))}
              </ul>
            ) : null}
            {c.email ? (
              <EmailState ticketId={ticket.id} email={c.email} onChanged={onAdded} />
            ) : null}
          </li>
        ))}
        {thread.hasOlder ? (
          <li className="older">
            <button
              type="button"
              className="secondary"
              disabled={thread.loading}
              onClick={() => void thread.loadOlder()}
            >
              {thread.loading
                ? 'Loading…'
                : `Show older comments (${ticket.comments_total - thread.items.length} more)`}
            </button>
            {thread.error ? <p className="notice error">{thread.error}</p> : null}
          </li>
        ) : null}
        {ticket.description ? (
          <li className="request">
            <p className="small muted">
              <strong>{ticket.requester_name}</strong> · {formatDateTime(ticket.created_at)} · the
              request
            </p>
            <p className="comment-body">{ticket.description}</p>
            {ticket.acknowledgement ? (
              <EmailState ticketId={ticket.id} email={ticket.acknowledgement} onChanged={onAdded} />
            ) : null}
          </li>
        ) : null}
      </ol>
    </Section>
  );
}

/** A comment's text; the quoted history an email client added under it, folded. */
function CommentBody({ body, quotedFrom }: { body: string; quotedFrom: number | null }) {
  if (quotedFrom === null) return <p className="comment-body">{body}</p>;
  return (
    <>
      <p className="comment-body">{body.slice(0, quotedFrom).trimEnd()}</p>
      <details className="quoted">
        <summary className="small muted">Show the quoted text</summary>
        <p className="comment-body muted">{body.slice(quotedFrom)}</p>
      </details>
    </>
  );
}

/** `15.0 MB`, `12 KB`: a file's size as people read it. */
function sizeInWords(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/**
 * What went wrong, in the words of the form: the server's issues by field; a refused upload
 * (413 from a proxy in front, without Stega's issues) and a lost connection said plainly.
 */
function issuesOf(error: unknown): Issue[] {
  if (error instanceof ApiError) {
    if (error.issues.length > 0) return error.issues;
    if (error.status === 413) {
      return [
        {
          path: 'files',
          message: 'These files are too large to send: attach fewer or smaller ones.',
        },
      ];
    }
    return [{ path: 'body', message: error.message }];
  }
  return [
    {
      path: 'body',
      message:
        'The comment could not be sent (the connection failed); check your network and try again.',
    },
  ];
}

const REPLY_AS = 'stega.replyAs';

/** The agent a token of no agent last chose to reply as ('' for none), kept per browser. */
function readReplyAs(): string | undefined {
  try {
    return localStorage.getItem(REPLY_AS) ?? undefined;
  } catch {
    return undefined;
  }
}

function saveReplyAs(value: string): void {
  try {
    localStorage.setItem(REPLY_AS, value);
  } catch {
    // storage may be unavailable (private mode); the choice then lasts for the page
  }
}
