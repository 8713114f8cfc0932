import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Issue } from '../api.js';
import { DataTable } from '../components/data-table.js';
import {
  CheckField,
  choicesOf,
  SelectField,
  TextField,
  TimeZoneField,
} from '../components/form-fields.js';
import { LoadState, Section, TableRegion } from '../components/layout.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { allAgentsQuery, keys, tokensQuery } from '../data/queries.js';
import { formatDateTime } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import type { Agent, Token } from '../types.js';

/**
 * Agents and API tokens (admin): add, change, invite, deactivate and reactivate agents; issue
 * and revoke tokens.
 */
export function AgentsPage() {
  useTitle('Agents and tokens');
  const agents = useQuery({ ...allAgentsQuery(), refetchInterval: 30_000 });
  const tokens = useQuery({ ...tokensQuery(), refetchInterval: 30_000 });
  const refreshTokens = () => void tokens.refetch();
  const agentList = agents.data?.items ?? [];
  const activeAgents = agentList.filter((a) => a.deactivated_at === null);
  return (
    <div className="page">
      <h1>Agents and tokens</h1>
      <p className="muted">
        Agents answer tickets and receive alerts; an agent sees the tickets of their teams, those
        assigned to them and those of no team, a supervisor every team’s, an admin everything. A
        deactivated agent cannot sign in and their tokens are revoked; their name stays in the
        history. Tokens are for integrations (with scopes) and scripts.
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
                  <th scope="col">Role</th>
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
              {
                header: 'Role',
                cell: (t) =>
                  t.role === 'integration'
                    ? `Integration: ${t.scopes.join(', ')}`
                    : t.role === 'admin'
                      ? 'Admin'
                      : 'Agent',
              },
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
        <NewToken agents={activeAgents} onCreated={refreshTokens} />
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
      <SelectField
        path="role"
        idPrefix={prefix}
        label={cap('role')}
        issues={issues}
        value={draft.role}
        onChange={(role) => onChange({ ...draft, role: role as AgentDraft['role'] })}
        choices={ROLES}
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
  role: Agent['role'];
  time_zone: string;
}

const ROLES = [
  { value: 'agent', label: 'Agent' },
  { value: 'supervisor', label: 'Supervisor' },
  { value: 'admin', label: 'Admin' },
];
const roleLabel = (role: Agent['role']) => ROLES.find((r) => r.value === role)?.label ?? role;

const agentBody = (d: AgentDraft) => ({
  name: d.name,
  email: d.email,
  role: d.role,
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
    role: agent.role,
    time_zone: agent.time_zone ?? '',
  }));
  const save = useSave([keys.agents, keys.teams, keys.tokens]);
  const active = agent.deactivated_at === null;
  const setActive = (to: boolean) =>
    save.run(async () => {
      await api('POST', `/api/agents/${agent.id}/${to ? 'reactivate' : 'deactivate'}`);
      save.setSaved(`${agent.name} ${to ? 'reactivated' : 'deactivated'}.`);
    });
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save.run(async () => {
      await api('PATCH', `/api/agents/${agent.id}`, agentBody(draft));
      setEditing(false);
    });
  };
  if (!editing) {
    return (
      <tr data-agent-id={agent.id} className={active ? undefined : 'muted'}>
        <td data-label="Name">
          {agent.name}
          {active ? null : ` (deactivated ${formatDateTime(agent.deactivated_at ?? '')})`}
        </td>
        <td data-label="Email" className="break">
          {agent.email}
        </td>
        <td data-label="Role">{roleLabel(agent.role)}</td>
        <td data-label="Time zone">{zoneText(agent)}</td>
        <td data-label="Since">{formatDateTime(agent.created_at)}</td>
        <td data-label="Change">
          <SaveFeedback save={save} knownPaths={() => false} />
          {active ? (
            <>
              <button type="button" className="secondary small" onClick={() => setEditing(true)}>
                Edit {agent.name}
              </button>{' '}
              <InviteButton agent={agent} />{' '}
              {agent.has_second_factor ? (
                <>
                  <button
                    type="button"
                    className="secondary small"
                    disabled={save.busy}
                    onClick={() =>
                      save.run(async () => {
                        await api('DELETE', `/api/agents/${agent.id}/second-factor`);
                        save.setSaved(
                          `${agent.name}'s second factor is reset: their password alone signs in until they set up a new one.`,
                        );
                      })
                    }
                  >
                    Reset second factor of {agent.name}
                  </button>{' '}
                </>
              ) : null}
              <button type="button" className="danger small" onClick={() => setActive(false)}>
                Deactivate {agent.name}
              </button>
            </>
          ) : (
            <button type="button" className="secondary small" onClick={() => setActive(true)}>
              Reactivate {agent.name}
            </button>
          )}
        </td>
      </tr>
    );
  }
  const prefix = `agent-${agent.id}`;
  return (
    <tr data-agent-id={agent.id}>
      <td colSpan={6}>
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

const NO_AGENT: AgentDraft = { name: '', email: '', role: 'agent', time_zone: '' };

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
  const [role, setRole] = useState<Token['role']>('agent');
  const [agentId, setAgentId] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [issued, setIssued] = useState<{ name: string; token: string } | undefined>();
  const save = useSave();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setIssued(undefined);
    await save.run(async () => {
      const created = await api<Token & { token: string }>(
        'POST',
        '/api/tokens',
        role === 'integration'
          ? { name, role, scopes }
          : { name, role, agent_id: agentId === '' ? null : Number(agentId) },
      );
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
          onChange={(v) => setRole(v as Token['role'])}
          choices={[
            { value: 'agent', label: 'Agent' },
            { value: 'admin', label: 'Admin' },
            { value: 'integration', label: 'Integration (scopes)' },
          ]}
        />
        {role === 'integration' ? null : (
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
        )}
      </div>
      {role === 'integration' ? (
        <fieldset className="checks">
          <legend>Scopes</legend>
          {SCOPE_CHOICES.map((scope) => (
            <CheckField
              key={scope.value}
              checked={scopes.includes(scope.value)}
              onChange={(on) =>
                setScopes((now) =>
                  on ? [...now, scope.value] : now.filter((s) => s !== scope.value),
                )
              }
            >
              {scope.label}
            </CheckField>
          ))}
        </fieldset>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          Issue token
        </button>
      </div>
    </form>
  );
}

const SCOPE_CHOICES = [
  { value: 'tickets:read', label: 'tickets:read — list and read tickets' },
  { value: 'tickets:write', label: 'tickets:write — create, change, move tickets' },
  { value: 'comments:write', label: 'comments:write — comment' },
  { value: 'comments:requester', label: 'comments:requester — post as the requester' },
  { value: 'escalations:acknowledge', label: 'escalations:acknowledge — acknowledge' },
  { value: 'reports:read', label: 'reports:read — reports and SLA achievement' },
];

/** Emails the agent a one-time invitation to set their password and sign in. */
function InviteButton({ agent }: { agent: Agent }) {
  const save = useSave();
  return (
    <>
      <button
        type="button"
        className="secondary small"
        disabled={save.busy}
        onClick={() =>
          save.run(async () => {
            await api('POST', `/api/agents/${agent.id}/invitation`);
            save.setSaved(`Invitation emailed to ${agent.email}.`);
          })
        }
      >
        Invite {agent.name}
      </button>
      <SaveFeedback save={save} knownPaths={() => false} />
    </>
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
