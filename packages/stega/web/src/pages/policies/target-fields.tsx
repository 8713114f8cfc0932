import { useQuery } from '@tanstack/react-query';
import type { Issue } from '../../api.js';
import { Field } from '../../components/field.js';
import { TextField } from '../../components/form-fields.js';
import { escalationPoliciesQuery, teamsQuery } from '../../data/queries.js';
import { label } from '../../format.js';
import { type Calendar, PRIORITIES, type Priority } from '../../types.js';
import type { PolicyDraft, SetDraft } from './draft.js';

/** What a policy applies to (priority, organisation, team), its targets and its calendar. */
export function TargetFields({
  draft,
  set,
  issues,
  editing,
  calendars,
}: {
  draft: PolicyDraft;
  set: SetDraft;
  issues: Issue[];
  editing: boolean;
  calendars: Calendar[] | undefined;
}) {
  const teams = useQuery({ ...teamsQuery(), refetchInterval: 60_000 });
  const escalations = useQuery({ ...escalationPoliciesQuery(), refetchInterval: 60_000 });
  const minutes = { inputMode: 'numeric' } as const;
  return (
    <>
      <TextField
        path="name"
        label="Name"
        issues={issues}
        hint={editing ? undefined : 'Optional: defaults to the priority and organisation.'}
        value={draft.name}
        onChange={(v) => set('name', v)}
      />
      <div className="row">
        <Field path="priority" label="Priority" issues={issues}>
          {(aria) => (
            <select
              {...aria}
              value={draft.priority}
              onChange={(e) => set('priority', e.target.value as Priority)}
            >
              {PRIORITIES.map((p) => (
                <option key={p} value={p}>
                  {label(p)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <TextField
          path="requester_org"
          label="Requester organisation"
          issues={issues}
          hint="Empty: every organisation."
          value={draft.requester_org}
          onChange={(v) => set('requester_org', v)}
        />
        <Field path="team_id" label="Team" issues={issues} hint="Empty: every team.">
          {(aria) => (
            <select
              {...aria}
              value={draft.team_id}
              onChange={(e) => set('team_id', e.target.value)}
            >
              <option value="">Every team</option>
              {(teams.data?.items ?? []).map((team) => (
                <option key={team.id} value={String(team.id)}>
                  {team.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <div className="row">
        <TextField
          path="first_response_minutes"
          label="First response target (business minutes)"
          issues={issues}
          value={draft.first_response_minutes}
          onChange={(v) => set('first_response_minutes', v)}
          input={minutes}
        />
        <TextField
          path="resolution_minutes"
          label="Resolution target (business minutes)"
          issues={issues}
          value={draft.resolution_minutes}
          onChange={(v) => set('resolution_minutes', v)}
          input={minutes}
        />
        <TextField
          path="next_reply_minutes"
          label="Next reply target (business minutes)"
          issues={issues}
          hint="After each requester reply. Empty: none."
          value={draft.next_reply_minutes}
          onChange={(v) => set('next_reply_minutes', v)}
          input={minutes}
        />
      </div>
      <Field path="calendar_id" label="Business calendar" issues={issues}>
        {(aria) => (
          <select
            {...aria}
            value={draft.calendar_id}
            onChange={(e) => set('calendar_id', e.target.value)}
          >
            {(calendars ?? []).map((c) => (
              <option key={c.id} value={String(c.id)}>
                {c.always_open ? c.name : `${c.name} (${c.time_zone})`}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        path="escalation_policy_id"
        label="Escalation policy"
        issues={issues}
        hint="A breach climbs its levels until someone acknowledges it or the SLA is met. None: the alert goes once."
      >
        {(aria) => (
          <select
            {...aria}
            value={draft.escalation_policy_id}
            onChange={(e) => set('escalation_policy_id', e.target.value)}
          >
            <option value="">None</option>
            {(escalations.data?.items ?? []).map((e) => (
              <option key={e.id} value={String(e.id)}>
                {e.name} ({e.levels.length} {e.levels.length === 1 ? 'level' : 'levels'})
              </option>
            ))}
          </select>
        )}
      </Field>
    </>
  );
}
