import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Issue } from '../api.js';
import { DataTable } from '../components/data-table.js';
import { choicesOf, SelectField, TextField, TimeZoneField } from '../components/form-fields.js';
import { LoadState, Section, TableRegion } from '../components/layout.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { agentsQuery, keys, tokensQuery } from '../data/queries.js';
import { formatDateTime } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import type { Agent, Token } from '../types.js';

/** Agents and API tokens (admin): add and rename agents, issue and revoke tokens. */
export function AgentsPage() {
  useTitle('Agents and tokens');
  const agents = useQuery({ ...agentsQuery(), refetchInterval: 30_000 });
  const tokens = useQuery({ ...tokensQuery(), refetchInterval: 30_000 });
  const refreshTokens = () => void tokens.refetch();
  const agentList = agents.data?.items ?? [];
  return (
    <div className="page">
      <h1>Agents and tokens</h1>
      <p className="muted">
        Agents answer tickets and receive alerts. Each agent signs in with an agent token; an admin
        token may belong to an agent too, and then its replies are that agent’s.
      </p>
      <Section id="agents" title={`Agents (${agentList.length})`}>
        <LoadState
          loading={agents.isPending}
          error={agents.error}
          empty={agentList.length === 0}
          emptyText="No agent yet."
        />
        {agentList.length > 0 ? (
          <TableRegion label="Agents">
            <table className="responsive">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Time zone</th>
                  <th scope="col">Since</th>
                  <th scope="col">Change</th>
                </tr>
              </thead>
              <tbody>
                {agentList.map((a) => (
                  <AgentRow key={a.id} agent={a} />
                ))}
              </tbody>
            </table>
          </TableRegion>
        ) : null}
        <NewAgent />
      </Section>
      <Section id="tokens" title="API tokens">
        <LoadState
          loading={tokens.isPending}
          error={tokens.error}
          empty={(tokens.data?.items.length ?? 0) === 0}
          emptyText="No stored token yet (the admin token of the configuration is not listed)."
        />
        {(tokens.data?.items.length ?? 0) > 0 ? (
          <DataTable<Token>
            label="API tokens"
            rows={tokens.data?.items ?? []}
            rowKey={(t) => t.id}
            rowProps={(t) => ({ 'data-token-id': t.id })}
            columns={[
              { header: 'Name', cell: (t) => t.name },
              { header: 'Role', cell: (t) => (t.role === 'admin' ? 'Admin' : 'Agent') },
              { header: 'Agent', cell: (t) => t.agent_name ?? '—' },
              { header: 'Created', cell: (t) => formatDateTime(t.created_at) },
              {
                header: 'State',
                cell: (t) =>
                  t.revoked_at ? (
                    `Revoked ${formatDateTime(t.revoked_at)}`
                  ) : (
                    <RevokeButton token={t} onRevoked={refreshTokens} />
                  ),
              },
            ]}
          />
        ) : null}
        <NewToken agents={agentList} onCreated={refreshTokens} />
      </Section>
    </div>
  );
}

/** An agent's name, email and time zone, as the new-agent and edit forms ask for them. */
function AgentFields({
  prefix,
  labelPrefix,
  draft,
  onChange,
  issues,
}: {
  prefix: string;
  /** "Agent " in the new-agent form ("Agent name"); empty in a row that names its agent. */
  labelPrefix: string;
  draft: AgentDraft;
  onChange: (draft: AgentDraft) => void;
  issues: Issue[];
}) {
  const cap = (word: string) =>
    labelPrefix ? `${labelPrefix}${word}` : word.charAt(0).toUpperCase() + word.slice(1);
  return (
    <div className="row">
      <TextField
        path="name"
        idPrefix={prefix}
        label={cap('name')}
        issues={issues}
        value={draft.name}
        onChange={(name) => onChange({ ...draft, name })}
      />
      <TextField
        path="email"
        idPrefix={prefix}
        label={cap('email')}
        issues={issues}
        value={draft.email}
        onChange={(email) => onChange({ ...draft, email })}
        input={{ type: 'email' }}
      />
      <TimeZoneField
        path="time_zone"
        idPrefix={prefix}
        label={cap('time zone')}
        issues={issues}
        hint="IANA name, e.g. Europe/Lisbon; empty: the first team’s, else the instance’s."
        value={draft.time_zone}
        onChange={(time_zone) => onChange({ ...draft, time_zone })}
      />
    </div>
  );
}

interface AgentDraft {
  name: string;
  email: string;
  time_zone: string;
}

const agentBody = (d: AgentDraft) => ({
  name: d.name,
  email: d.email,
  time_zone: d.time_zone.trim() === '' ? null : d.time_zone.trim(),
});

/** Where an agent's times are read: its own zone, else the one it inherits. */
function zoneText(agent: Agent): string {
  return agent.time_zone ?? `${agent.effective_time_zone} (inherited)`;
}

function AgentRow({ agent }: { agent: Agent }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<AgentDraft>(() => ({
    name: agent.name,
    email: agent.email,
    time_zone: agent.time_zone ?? '',
  }));
  const save = useSave([keys.agents, keys.teams]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save.run(async () => {
      await api('PATCH', `/api/agents/${agent.id}`, agentBody(draft));
      setEditing(false);
    });
  };
  if (!editing) {
    return (
      <tr data-agent-id={agent.id}>
        <td data-label="Name">{agent.name}</td>
        <td data-label="Email" className="break">
          {agent.email}
        </td>
        <td data-label="Time zone">{zoneText(agent)}</td>
        <td data-label="Since">{formatDateTime(agent.created_at)}</td>
        <td data-label="Change">
          <button type="button" className="secondary small" onClick={() => setEditing(true)}>
            Edit {agent.name}
          </button>
        </td>
      </tr>
    );
  }
  const prefix = `agent-${agent.id}`;
  return (
    <tr data-agent-id={agent.id}>
      <td colSpan={5}>
        <form onSubmit={submit} noValidate className="form inline-form" id={prefix}>
          <SaveFeedback save={save} knownPaths={() => false} />
          <AgentFields
            prefix={prefix}
            labelPrefix=""
            draft={draft}
            onChange={setDraft}
            issues={save.issues}
          />
          <div className="actions">
            <button type="submit" className="primary" disabled={save.busy}>
              Save agent
            </button>
            <button type="button" className="secondary" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      </td>
    </tr>
  );
}

const NO_AGENT: AgentDraft = { name: '', email: '', time_zone: '' };

function NewAgent() {
  const [draft, setDraft] = useState<AgentDraft>(NO_AGENT);
  const save = useSave([keys.agents]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save.run(async () => {
      const agent = await api<Agent>('POST', '/api/agents', agentBody(draft));
      setDraft(NO_AGENT);
      save.setSaved(`Agent ${agent.name} added.`);
    });
  };
  return (
    <form onSubmit={submit} noValidate className="form" aria-label="New agent">
      <h3>Add an agent</h3>
      <SaveFeedback save={save} knownPaths={() => false} />
      <AgentFields
        prefix="new-agent"
        labelPrefix="Agent "
        draft={draft}
        onChange={setDraft}
        issues={save.issues}
      />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          Add agent
        </button>
      </div>
    </form>
  );
}

function NewToken({ agents, onCreated }: { agents: Agent[]; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<'agent' | 'admin'>('agent');
  const [agentId, setAgentId] = useState('');
  const [issued, setIssued] = useState<{ name: string; token: string } | undefined>();
  const save = useSave();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setIssued(undefined);
    await save.run(async () => {
      const created = await api<Token & { token: string }>('POST', '/api/tokens', {
        name,
        role,
        agent_id: agentId === '' ? null : Number(agentId),
      });
      setIssued({ name: created.name, token: created.token });
      setName('');
      onCreated();
    });
  };
  return (
    <form onSubmit={submit} noValidate className="form" aria-label="New API token">
      <h3>Issue a token</h3>
      <SaveFeedback save={save} knownPaths={() => false} />
      {issued ? (
        <div className="notice ok" role="status">
          <p>
            Token <strong>{issued.name}</strong> issued. Copy it now: it is shown this once.
          </p>
          <p>
            <code className="token" data-testid="issued-token">
              {issued.token}
            </code>
          </p>
        </div>
      ) : null}
      <div className="row">
        <TextField
          path="name"
          idPrefix="new-token"
          label="Token name"
          issues={save.issues}
          hint="e.g. “Ana’s laptop”."
          value={name}
          onChange={setName}
        />
        <SelectField
          path="role"
          idPrefix="new-token"
          label="Role"
          issues={save.issues}
          value={role}
          onChange={(v) => setRole(v as 'agent' | 'admin')}
          choices={[
            { value: 'agent', label: 'Agent' },
            { value: 'admin', label: 'Admin' },
          ]}
        />
        <SelectField
          path="agent_id"
          idPrefix="new-token"
          label="Agent"
          issues={save.issues}
          hint={role === 'agent' ? 'An agent token belongs to an agent.' : 'Optional.'}
          value={agentId}
          onChange={setAgentId}
          choices={choicesOf(agents, [
            { value: '', label: role === 'agent' ? 'Choose an agent…' : 'No agent' },
          ])}
        />
      </div>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          Issue token
        </button>
      </div>
    </form>
  );
}

function RevokeButton({ token, onRevoked }: { token: Token; onRevoked: () => void }) {
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button type="button" className="secondary small" onClick={() => setConfirming(true)}>
        Revoke {token.name}
      </button>
    );
  }
  return (
    <span className="confirm">
      Revoke now?{' '}
      <button
        type="button"
        className="danger small"
        onClick={async () => {
          await api('DELETE', `/api/tokens/${token.id}`);
          setConfirming(false);
          onRevoked();
        }}
      >
        Yes, revoke
      </button>{' '}
      <button type="button" className="secondary small" onClick={() => setConfirming(false)}>
        No
      </button>
    </span>
  );
}
