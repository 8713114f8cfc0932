import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.js';
import { choicesOf, SelectField, TextField, TimeZoneField } from '../components/form-fields.js';
import { LoadState, Section } from '../components/layout.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { agentsQuery, teamsQuery } from '../data/queries.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import type { Agent, Team } from '../types.js';

/** Teams: members and lead; admins add teams and change them. */
export function TeamsPage({ admin }: { admin: boolean }) {
  useTitle('Teams');
  const teams = useQuery({ ...teamsQuery(), refetchInterval: 30_000 });
  const agents = useQuery({ ...agentsQuery(), refetchInterval: 60_000 });
  const list = teams.data?.items ?? [];
  const refresh = () => void teams.refetch();
  const agentList = agents.data?.items ?? [];
  return (
    <div className="page">
      <h1>Teams</h1>
      <p className="muted">
        A ticket belongs to a team; an unassigned ticket’s in-app alerts go to every member. SLA
        policies may be scoped to a team. Members without a time zone of their own read times in the
        team’s.
      </p>
      <Section id="teams" title={`Teams (${list.length})`}>
        <LoadState
          loading={teams.isPending}
          error={teams.error}
          empty={list.length === 0}
          emptyText="No team yet."
        />
        {list.map((team) => (
          <TeamCard key={team.id} team={team} agents={agentList} admin={admin} onSaved={refresh} />
        ))}
        {admin ? <TeamForm agents={agentList} onSaved={refresh} /> : null}
      </Section>
    </div>
  );
}

function TeamCard({
  team,
  agents,
  admin,
  onSaved,
}: {
  team: Team;
  agents: Agent[];
  admin: boolean;
  onSaved: () => void;
}) {
  const [editing, setEditing] = useState(false);
  if (editing) {
    return (
      <TeamForm
        team={team}
        agents={agents}
        onSaved={() => {
          setEditing(false);
          onSaved();
        }}
        onCancel={() => setEditing(false)}
      />
    );
  }
  return (
    <article className="card" data-team-id={team.id} aria-label={`Team ${team.name}`}>
      <h3>{team.name}</h3>
      <p className="muted">Time zone: {team.time_zone ?? 'the instance’s'}</p>
      {team.members.length === 0 ? (
        <p>No member yet.</p>
      ) : (
        <ul className="members">
          {team.members.map((m) => (
            <li key={m.agent_id} data-member-id={m.agent_id}>
              {m.name} <span className="muted">{m.email}</span>
              {m.is_lead ? <strong className="badge"> lead</strong> : null}
            </li>
          ))}
        </ul>
      )}
      {admin ? (
        <button type="button" className="secondary small" onClick={() => setEditing(true)}>
          Edit {team.name}
        </button>
      ) : null}
    </article>
  );
}

function TeamForm({
  team,
  agents,
  onSaved,
  onCancel,
}: {
  team?: Team;
  agents: Agent[];
  onSaved: () => void;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(team?.name ?? '');
  const [zone, setZone] = useState(team?.time_zone ?? '');
  const [members, setMembers] = useState<number[]>(team?.members.map((m) => m.agent_id) ?? []);
  const [lead, setLead] = useState(team?.lead_agent_id ? String(team.lead_agent_id) : '');
  // the revision the draft was made from: what the save's If-Match names
  const [revision, setRevision] = useState(team?.revision);
  const save = useSave();
  const prefix = team ? `team-${team.id}` : 'new-team';
  // someone else saved first (412): start again from their version
  const reload = (id: number) =>
    save.reload(async () => {
      const fresh = await api<Team>('GET', `/api/teams/${id}`);
      setName(fresh.name);
      setZone(fresh.time_zone ?? '');
      setMembers(fresh.members.map((m) => m.agent_id));
      setLead(fresh.lead_agent_id ? String(fresh.lead_agent_id) : '');
      setRevision(fresh.revision);
    });
  const toggle = (id: number, on: boolean) => {
    setMembers((current) => (on ? [...current, id] : current.filter((m) => m !== id)));
    if (!on && lead === String(id)) setLead('');
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save.run(async () => {
      const body = {
        name,
        time_zone: zone.trim() === '' ? null : zone.trim(),
        member_ids: members,
        lead_agent_id: lead === '' ? null : Number(lead),
      };
      const saved = team
        ? await api<Team>('PATCH', `/api/teams/${team.id}`, body, { ifMatch: revision })
        : await api<Team>('POST', '/api/teams', body);
      if (!team) {
        setName('');
        setZone('');
        setMembers([]);
        setLead('');
      } else setRevision(saved.revision);
      save.setSaved(`Team ${saved.name} saved.`);
      onSaved();
    });
  };
  return (
    <form
      onSubmit={submit}
      noValidate
      className="form"
      aria-label={team ? `Edit team ${team.name}` : 'New team'}
    >
      <h3>{team ? `Edit ${team.name}` : 'Add a team'}</h3>
      <SaveFeedback
        save={save}
        idPrefix={prefix}
        onReload={team ? () => reload(team.id) : undefined}
      />
      <div className="row">
        <TextField
          path="name"
          idPrefix={prefix}
          label="Team name"
          issues={save.issues}
          value={name}
          onChange={setName}
        />
        <TimeZoneField
          path="time_zone"
          idPrefix={prefix}
          label="Team time zone"
          issues={save.issues}
          hint="IANA name, e.g. Europe/Lisbon; empty: the instance’s."
          value={zone}
          onChange={setZone}
        />
        <SelectField
          path="lead_agent_id"
          idPrefix={prefix}
          label="Team lead"
          hint={
            members.length === 0
              ? 'Tick the members below first: the lead is one of them.'
              : 'One of the members ticked below.'
          }
          issues={save.issues}
          value={lead}
          onChange={setLead}
          choices={choicesOf(
            agents.filter((a) => members.includes(a.id)),
            [{ value: '', label: 'No lead' }],
          )}
        />
      </div>
      <fieldset>
        <legend>Members</legend>
        {agents.map((a) => (
          <label key={a.id} className="checkbox">
            <input
              type="checkbox"
              checked={members.includes(a.id)}
              onChange={(e) => toggle(a.id, e.target.checked)}
            />{' '}
            {a.name}
          </label>
        ))}
      </fieldset>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          {team ? 'Save team' : 'Add team'}
        </button>
        {onCancel ? (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
