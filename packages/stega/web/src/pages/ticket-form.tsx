import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api.js';
import { ErrorSummary, Field } from '../components/field.js';
import { RecordLoading } from '../components/record-loading.js';
import { agentsQuery, keys, teamsQuery, ticketQuery } from '../data/queries.js';
import { label } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import { PRIORITIES, type Priority, type TicketDetail } from '../types.js';

interface Draft {
  subject: string;
  description: string;
  requester_name: string;
  requester_email: string;
  requester_org: string;
  priority: Priority;
  assignee_id: string;
  team_id: string;
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
  };
}

/** Create a ticket, or edit one (`id`): only changed fields are sent. */
export function TicketFormPage({ id }: { id?: number }) {
  const editing = id !== undefined;
  useTitle(editing ? `Edit ticket #${id}` : 'New ticket');
  const record = useQuery({ ...ticketQuery(id ?? 0), enabled: editing });
  if (editing && !record.data) {
    return (
      <RecordLoading
        back={`/tickets/${id}`}
        backText={`← Ticket #${id}`}
        title={`Edit ticket #${id}`}
        error={record.error ?? undefined}
      />
    );
  }
  return <TicketForm id={id} ticket={record.data} />;
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
        <Field path="subject" label="Subject" issues={issues}>
          {(aria) => (
            <input
              {...aria}
              name="subject"
              value={draft.subject}
              onChange={(e) => set('subject')(e.target.value)}
              maxLength={300}
              required
            />
          )}
        </Field>
        <Field path="description" label="Description" issues={issues} hint="Optional.">
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
          <Field path="requester_name" label="Requester name" issues={issues}>
            {(aria) => (
              <input
                {...aria}
                name="requester_name"
                autoComplete="name"
                value={draft.requester_name}
                onChange={(e) => set('requester_name')(e.target.value)}
                required
              />
            )}
          </Field>
          <Field path="requester_email" label="Requester email" issues={issues}>
            {(aria) => (
              <input
                {...aria}
                name="requester_email"
                type="email"
                autoComplete="email"
                value={draft.requester_email}
                onChange={(e) => set('requester_email')(e.target.value)}
                required
              />
            )}
          </Field>
        </div>
        <Field
          path="requester_org"
          label="Requester organisation"
          issues={issues}
          hint="Optional. A policy for this organisation wins over the general one."
        >
          {(aria) => (
            <input
              {...aria}
              name="requester_org"
              autoComplete="organization"
              value={draft.requester_org}
              onChange={(e) => set('requester_org')(e.target.value)}
            />
          )}
        </Field>
        <div className="row">
          <Field
            path="priority"
            label="Priority"
            issues={issues}
            hint={editing ? 'A new priority restarts the SLA targets under its policy.' : undefined}
          >
            {(aria) => (
              <select
                {...aria}
                name="priority"
                value={draft.priority}
                onChange={(e) => set('priority')(e.target.value as Priority)}
              >
                {PRIORITIES.map((p) => (
                  <option key={p} value={p}>
                    {label(p)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field path="assignee_id" label="Assignee" issues={issues}>
            {(aria) => (
              <select
                {...aria}
                name="assignee_id"
                value={draft.assignee_id}
                onChange={(e) => set('assignee_id')(e.target.value)}
              >
                <option value="">Unassigned</option>
                {(agents.data?.items ?? []).map((agent) => (
                  <option key={agent.id} value={String(agent.id)}>
                    {agent.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field
            path="team_id"
            label="Team"
            issues={issues}
            hint="Unassigned alerts go to its members; its SLA policy may differ."
          >
            {(aria) => (
              <select
                {...aria}
                name="team_id"
                value={draft.team_id}
                onChange={(e) => set('team_id')(e.target.value)}
              >
                <option value="">No team</option>
                {(teams.data?.items ?? []).map((team) => (
                  <option key={team.id} value={String(team.id)}>
                    {team.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Saving…' : editing ? 'Save changes' : 'Create ticket'}
          </button>
          <Link to={editing ? `/tickets/${id}` : '/tickets'} className="button secondary">
            Cancel
          </Link>
        </div>
      </form>
    </div>
  );
}
