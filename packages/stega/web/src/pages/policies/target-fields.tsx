import { useQuery } from '@tanstack/react-query';
import type { Issue } from '../../api.js';
import {
  choicesOf,
  PRIORITY_CHOICES,
  SelectField,
  TextField,
} from '../../components/form-fields.js';
import { escalationPoliciesQuery, teamsQuery } from '../../data/queries.js';
import type { Calendar, Priority } from '../../types.js';
import type { PolicyDraft, SetDraft } from './draft.js';

/** The three targets, in business minutes. */
const TARGETS: {
  path: 'first_response_minutes' | 'resolution_minutes' | 'next_reply_minutes';
  label: string;
  hint?: string;
}[] = [
  { path: 'first_response_minutes', label: 'First response target (business minutes)' },
  { path: 'resolution_minutes', label: 'Resolution target (business minutes)' },
  {
    path: 'next_reply_minutes',
    label: 'Next reply target (business minutes)',
    hint: 'After each requester reply. Empty: none.',
  },
];

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
        <SelectField
          path="priority"
          label="Priority"
          issues={issues}
          value={draft.priority}
          onChange={(v) => set('priority', v as Priority)}
          choices={PRIORITY_CHOICES}
        />
        <TextField
          path="requester_org"
          label="Requester organisation"
          issues={issues}
          hint="Empty: every organisation."
          value={draft.requester_org}
          onChange={(v) => set('requester_org', v)}
        />
        <SelectField
          path="team_id"
          label="Team"
          issues={issues}
          hint="Empty: every team."
          value={draft.team_id}
          onChange={(v) => set('team_id', v)}
          choices={choicesOf(teams.data?.items, [{ value: '', label: 'Every team' }])}
        />
      </div>
      <div className="row">
        {TARGETS.map((target) => (
          <TextField
            key={target.path}
            path={target.path}
            label={target.label}
            issues={issues}
            hint={target.hint}
            value={draft[target.path]}
            onChange={(v) => set(target.path, v)}
            input={{ inputMode: 'numeric' }}
          />
        ))}
      </div>
      <SelectField
        path="calendar_id"
        label="Business calendar"
        issues={issues}
        value={draft.calendar_id}
        onChange={(v) => set('calendar_id', v)}
        choices={(calendars ?? []).map((c) => ({
          value: String(c.id),
          label: c.always_open ? c.name : `${c.name} (${c.time_zone})`,
        }))}
      />
      <SelectField
        path="escalation_policy_id"
        label="Escalation policy"
        issues={issues}
        hint="A breach climbs its levels until someone acknowledges it or the SLA is met. None: the alert goes once."
        value={draft.escalation_policy_id}
        onChange={(v) => set('escalation_policy_id', v)}
        choices={[
          { value: '', label: 'None' },
          ...(escalations.data?.items ?? []).map((e) => ({
            value: String(e.id),
            label: `${e.name} (${e.levels.length} ${e.levels.length === 1 ? 'level' : 'levels'})`,
          })),
        ]}
      />
    </>
  );
}

/**
 * The policy's pre-breach warnings and, when editing, whom a change of its targets,
 * thresholds or calendar reaches.
 */
export function WarningFields({
  draft,
  set,
  issues,
  editing,
}: {
  draft: PolicyDraft;
  set: SetDraft;
  issues: Issue[];
  editing: boolean;
}) {
  // an issue of one threshold (warning_thresholds[1]) shows at the one text field (the API
  // says its bounds in per cent, the field's unit, as well as in shares)
  const thresholdIssues = issues.map((issue) =>
    /^warning_thresholds\[\d+\]$/.test(issue.path)
      ? { ...issue, path: 'warning_thresholds' }
      : issue,
  );
  return (
    <>
      <TextField
        path="warning_thresholds"
        label="Warnings before the breach (% of the target)"
        issues={thresholdIssues}
        hint="Comma-separated, e.g. 50, 80: a warning at half the target and one at 80 %. Empty: the instance default (SLA_WARNING_SHARE). none: no warnings."
        value={draft.warning_thresholds}
        onChange={(v) => set('warning_thresholds', v)}
      />
      {editing ? (
        <SelectField
          path="apply_to"
          label="Apply changed targets, warnings or calendar to"
          issues={issues}
          hint="Running tickets: their due and warning times move now (breached clocks stay breached), and each move is logged on the ticket."
          value={draft.apply_to}
          onChange={(v) => set('apply_to', v as PolicyDraft['apply_to'])}
          choices={[
            { value: 'running', label: 'Running tickets and new ones' },
            { value: 'new_tickets_only', label: 'New tickets only' },
          ]}
        />
      ) : null}
    </>
  );
}
