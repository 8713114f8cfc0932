import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api.js';
import { ErrorSummary, Field } from '../components/field.js';
import { choicesOf, PRIORITY_CHOICES, SelectField, TextField } from '../components/form-fields.js';
import { WithRecord } from '../components/record-loading.js';
import {
  agentsQuery,
  keys,
  mailboxAddressesQuery,
  teamsQuery,
  ticketQuery,
} from '../data/queries.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import type { Priority, TicketDetail } from '../types.js';

interface Draft {
  subject: string;
  description: string;
  requester_name: string;
  requester_email: string;
  requester_org: string;
  priority: Priority;
  assignee_id: string;
  team_id: string;
  /** A new ticket only: email the requester from this mailbox ('' : do not). */
  mailbox_id: string;
}

const EMPTY: Draft = {
  subject: '',
  description: '',
  requester_name: '',
  requester_email: '',
  requester_org: '',
  priority: 'normal',
  assignee_id: '',
  team_id: '',
  mailbox_id: '',
};

const FIELDS = new Set([
  'subject',
  'description',
  'requester_name',
  'requester_email',
  'requester_org',
  'priority',
  'assignee_id',
  'team_id',
  'mailbox_id',
]);

function draftOf(ticket: TicketDetail): Draft {
  return {
    subject: ticket.subject,
    description: ticket.description,
    requester_name: ticket.requester_name,
    requester_email: ticket.requester_email,
    requester_org: ticket.requester_org ?? '',
    priority: ticket.priority,
    assignee_id: ticket.assignee_id === null ? '' : String(ticket.assignee_id),
    team_id: ticket.team_id === null ? '' : String(ticket.team_id),
    mailbox_id: '',
  };
}

function bodyOf(draft: Draft) {
  return {
    subject: draft.subject,
    description: draft.description,
    requester_name: draft.requester_name,
    requester_email: draft.requester_email,
    requester_org: draft.requester_org.trim() === '' ? null : draft.requester_org,
    priority: draft.priority,
    assignee_id: draft.assignee_id === '' ? null : Number(draft.assignee_id),
    team_id: draft.team_id === '' ? null : Number(draft.team_id),
    ...(draft.mailbox_id === '' ? {} : { mailbox_id: Number(draft.mailbox_id) }),
  };
}

/** Create a ticket, or edit one (`id`): only changed fields are sent. */
export function TicketFormPage({ id }: { id?: number }) {
  const editing = id !== undefined;
  useTitle(editing ? `Edit ticket #${id}` : 'New ticket');
  return (
    <WithRecord
      id={id}
      query={ticketQuery}
      back={`/tickets/${id}`}
      backText={`← Ticket #${id}`}
      title={`Edit ticket #${id}`}
    >
      {(ticket) => <TicketForm id={id} ticket={ticket} />}
    </WithRecord>
  );
}

/** The ticket's form: it starts from the ticket as loaded, so nothing typed is overwritten. */
function TicketForm({ id, ticket }: { id?: number; ticket?: TicketDetail }) {
  const editing = id !== undefined;
  const navigate = useNavigate();
  const [draft, setDraft] = useState<Draft>(() => (ticket ? draftOf(ticket) : EMPTY));
  const [original] = useState<Draft | undefined>(() => (ticket ? draftOf(ticket) : undefined));
  const { issues, message, busy, run } = useSave([keys.tickets]);
  const agents = useQuery({ ...agentsQuery(), refetchInterval: 60_000 });
  const teams = useQuery({ ...teamsQuery(), refetchInterval: 60_000 });
  const mailboxes = useQuery({ ...mailboxAddressesQuery(), enabled: !editing });
  const mailbox = mailboxes.data?.items.find((m) => String(m.id) === draft.mailbox_id);
  // a mailbox brings its team and priority, which stay changeable
  const chooseMailbox = (value: string) => {
    const chosen = mailboxes.data?.items.find((m) => String(m.id) === value);
    setDraft((d) => ({
      ...d,
      mailbox_id: value,
      ...(chosen
        ? {
            team_id: chosen.team_id === null ? '' : String(chosen.team_id),
            priority: chosen.priority,
          }
        : {}),
    }));
  };

  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const body = bodyOf(draft);
      if (editing && original) {
        const before = bodyOf(original);
        const changes = Object.fromEntries(
          Object.entries(body).filter(
            ([key, value]) => before[key as keyof typeof before] !== value,
          ),
        );
        if (Object.keys(changes).length === 0) {
          navigate(`/tickets/${id}`);
          return;
        }
        await api<TicketDetail>('PATCH', `/api/tickets/${id}`, changes);
        navigate(`/tickets/${id}`);
      } else {
        const created = await api<TicketDetail>('POST', '/api/tickets', body);
        navigate(`/tickets/${created.id}`);
      }
    });
  };

  return (
    <div className="page narrow-page">
      <p className="breadcrumb">
        <Link to={editing ? `/tickets/${id}` : '/tickets'}>
          {editing ? `← Ticket #${id}` : '← Tickets'}
        </Link>
      </p>
      <h1>{editing ? `Edit ticket #${id}` : 'New ticket'}</h1>
      <ErrorSummary issues={issues} message={message} knownPaths={(p) => FIELDS.has(p)} />
      <form onSubmit={submit} noValidate className="form">
        <TextField
          path="subject"
          label="Subject"
          issues={issues}
          value={draft.subject}
          onChange={set('subject')}
          input={{ name: 'subject', maxLength: 300, required: true }}
        />
        {!editing && (mailboxes.data?.items.length ?? 0) > 0 ? (
          <SelectField
            path="mailbox_id"
            name="mailbox_id"
            label="Email the requester from"
            issues={issues}
            hint="Optional. The description is sent to the requester as your first reply; their answer comes back to this ticket."
            value={draft.mailbox_id}
            onChange={chooseMailbox}
            choices={[
              { value: '', label: 'No email (a ticket only)' },
              ...(mailboxes.data?.items ?? []).map((m) => ({
                value: String(m.id),
                label: `${m.display_name} <${m.address}>`,
              })),
            ]}
          />
        ) : null}
        <Field
          path="description"
          label={mailbox ? 'Message to the requester' : 'Description'}
          issues={issues}
          hint={
            mailbox ? `Emailed from ${mailbox.display_name} <${mailbox.address}>.` : 'Optional.'
          }
        >
          {(aria) => (
            <textarea
              {...aria}
              name="description"
              rows={5}
              value={draft.description}
              onChange={(e) => set('description')(e.target.value)}
            />
          )}
        </Field>
        <div className="row">
          <TextField
            path="requester_name"
            label="Requester name"
            issues={issues}
            value={draft.requester_name}
            onChange={set('requester_name')}
            input={{ name: 'requester_name', autoComplete: 'name', required: true }}
          />
          <TextField
            path="requester_email"
            label="Requester email"
            issues={issues}
            value={draft.requester_email}
            onChange={set('requester_email')}
            input={{
              name: 'requester_email',
              type: 'email',
              autoComplete: 'email',
              required: true,
            }}
          />
        </div>
        <TextField
          path="requester_org"
          label="Requester organisation"
          issues={issues}
          hint="Optional. A policy for this organisation wins over the general one."
          value={draft.requester_org}
          onChange={set('requester_org')}
          input={{ name: 'requester_org', autoComplete: 'organization' }}
        />
        <div className="row">
          <SelectField
            path="priority"
            name="priority"
            label="Priority"
            issues={issues}
            hint={editing ? 'A new priority restarts the SLA targets under its policy.' : undefined}
            value={draft.priority}
            onChange={(v) => set('priority')(v as Priority)}
            choices={PRIORITY_CHOICES}
          />
          <SelectField
            path="assignee_id"
            name="assignee_id"
            label="Assignee"
            issues={issues}
            value={draft.assignee_id}
            onChange={set('assignee_id')}
            choices={choicesOf(agents.data?.items, [{ value: '', label: 'Unassigned' }])}
          />
          <SelectField
            path="team_id"
            name="team_id"
            label="Team"
            issues={issues}
            hint="Unassigned alerts go to its members; its SLA policy may differ."
            value={draft.team_id}
            onChange={set('team_id')}
            choices={choicesOf(teams.data?.items, [{ value: '', label: 'No team' }])}
          />
        </div>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy
              ? 'Saving…'
              : editing
                ? 'Save changes'
                : mailbox
                  ? 'Create ticket and send'
                  : 'Create ticket'}
          </button>
          <Link to={editing ? `/tickets/${id}` : '/tickets'} className="button secondary">
            Cancel
          </Link>
        </div>
      </form>
    </div>
  );
}
