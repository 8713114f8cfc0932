import { useQuery } from '@tanstack/react-query';
import type { Issue } from '../../api.js';
import type { ChatChannelsDraft } from '../../components/chat-channel-drafts.js';
import { ChatChannelFields } from '../../components/chat-channel-list.js';
import { Field, FieldError, type FieldProps, fieldId, issueAt } from '../../components/field.js';
import { TextField } from '../../components/form-fields.js';
import { getQuery, keys } from '../../data/queries.js';
import type { Agent } from '../../types.js';
import type { LevelDraft } from './draft.js';

interface LevelProps {
  /** The level's place (0 first). */
  index: number;
  level: LevelDraft;
  /** Keeps ids unique: a page shows several escalation forms. */
  idPrefix: string;
  issues: Issue[];
  onChange: (change: Partial<LevelDraft>) => void;
}

/** One level: its delay, the agents it notifies and its channels, each error next to its field. */
export function LevelFields({
  agents,
  onRemove,
  ...props
}: LevelProps & { agents: Agent[]; onRemove: (() => void) | undefined }) {
  const { index: i, level, idPrefix, issues, onChange } = props;
  const base = `levels[${i}]`;
  return (
    <fieldset className="group" aria-label={`Level ${i}`}>
      <legend>Level {i}</legend>
      <TextField
        path={`${base}.delay_minutes`}
        idPrefix={idPrefix}
        label={`Level ${i} delay (minutes after the breach)`}
        issues={issues}
        value={level.delay}
        onChange={(delay) => onChange({ delay })}
        input={{ inputMode: 'numeric' }}
      />
      <AgentTargets {...props} agents={agents} />
      <Recipients {...props} />
      <fieldset className="group" aria-label={`Level ${i} chat and on-call`}>
        <legend>Level {i} chat and on-call</legend>
        <ChatChannelFields
          path={`${base}.targets.channels`}
          idPrefix={idPrefix}
          owner={`level ${i}`}
          value={level}
          issues={issues}
          onChange={(key, rows) => onChange({ [key]: rows } as Partial<ChatChannelsDraft>)}
        />
      </fieldset>
      <FieldError
        id={`${fieldId(`${idPrefix}.${base}.targets`)}-error`}
        message={issueAt(issues, `${base}.targets`)}
      />
      {onRemove ? (
        <button type="button" className="secondary small" onClick={onRemove}>
          Remove level {i}
        </button>
      ) : null}
    </fieldset>
  );
}

const WHO = [
  ['assignee', 'Assignee'],
  ['team', 'Team'],
  ['team_lead', 'Team lead'],
] as const;

/** The ticket's assignee, team and team lead, and named agents. */
function AgentTargets({ index: i, level, onChange, agents }: LevelProps & { agents: Agent[] }) {
  return (
    <>
      <div className="row">
        {WHO.map(([key, words]) => (
          <label key={key} className="check">
            <input
              type="checkbox"
              checked={level[key]}
              onChange={(e) => onChange({ [key]: e.target.checked })}
            />{' '}
            {words}
          </label>
        ))}
      </div>
      <OnCallTargets index={i} level={level} onChange={onChange} />
      {agents.length > 0 ? (
        <fieldset>
          <legend>Level {i} agents</legend>
          {agents.map((a) => (
            <label key={a.id} className="checkbox">
              <input
                type="checkbox"
                checked={level.agents.includes(a.id)}
                onChange={(e) =>
                  onChange({
                    agents: e.target.checked
                      ? [...level.agents, a.id]
                      : level.agents.filter((id) => id !== a.id),
                  })
                }
              />{' '}
              {a.name}
            </label>
          ))}
        </fieldset>
      ) : null}
    </>
  );
}

/** Whoever is on call in the schedules checked, when the level fires. */
function OnCallTargets({
  index: i,
  level,
  onChange,
}: Pick<LevelProps, 'index' | 'level' | 'onChange'>) {
  const schedules = useQuery(
    getQuery<{ items: { id: number; name: string }[] }>(keys.schedules, '/api/schedules'),
  );
  const list = schedules.data?.items ?? [];
  if (list.length === 0) return null;
  return (
    <fieldset>
      <legend>Level {i} on call in</legend>
      {list.map((s) => (
        <label key={s.id} className="checkbox">
          <input
            type="checkbox"
            checked={level.on_call.some((t) => t.schedule_id === s.id)}
            onChange={(e) =>
              onChange({
                on_call: e.target.checked
                  ? [...level.on_call, { schedule_id: s.id, fallback_agent_id: null }]
                  : level.on_call.filter((t) => t.schedule_id !== s.id),
              })
            }
          />{' '}
          {s.name}
        </label>
      ))}
    </fieldset>
  );
}

/** The level's email addresses and webhook URLs. */
function Recipients({ index: i, level, idPrefix, issues, onChange }: LevelProps) {
  const channels = `levels[${i}].targets.channels`;
  const place = { idPrefix, issues };
  return (
    <div className="row">
      <LinesField
        {...place}
        path={`${channels}.email`}
        label={`Level ${i} email addresses`}
        hint="One a line."
        value={level.email}
        onChange={(email) => onChange({ email })}
      />
      <LinesField
        {...place}
        path={`${channels}.webhooks`}
        label={`Level ${i} webhook URLs`}
        hint="One a line; a URL kept keeps its secret."
        value={level.webhooks}
        onChange={(webhooks) => onChange({ webhooks })}
      />
    </div>
  );
}

/** A two-line textarea of one entry a line, with its hint and its error beneath it. */
function LinesField({
  value,
  onChange,
  ...field
}: Omit<FieldProps, 'children' | 'className'> & {
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field {...field}>
      {(aria) => (
        <textarea {...aria} rows={2} value={value} onChange={(e) => onChange(e.target.value)} />
      )}
    </Field>
  );
}
