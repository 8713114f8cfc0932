import type { Issue } from '../../api.js';
import type { ChatChannelsDraft } from '../../components/chat-channel-drafts.js';
import { ChatChannelFields } from '../../components/chat-channel-list.js';
import { Field, FieldError, fieldId, issueAt } from '../../components/field.js';
import { TextField } from '../../components/form-fields.js';
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

/** The level's email addresses and webhook URLs. */
function Recipients({ index: i, level, idPrefix, issues, onChange }: LevelProps) {
  const channels = `levels[${i}].targets.channels`;
  return (
    <div className="row">
      <Field
        path={`${channels}.email`}
        idPrefix={idPrefix}
        label={`Level ${i} email addresses`}
        issues={issues}
        hint="One a line."
      >
        {(aria) => (
          <textarea
            {...aria}
            rows={2}
            value={level.email}
            onChange={(e) => onChange({ email: e.target.value })}
          />
        )}
      </Field>
      <Field
        path={`${channels}.webhooks`}
        idPrefix={idPrefix}
        label={`Level ${i} webhook URLs`}
        issues={issues}
        hint="One a line; a URL kept keeps its secret."
      >
        {(aria) => (
          <textarea
            {...aria}
            rows={2}
            value={level.webhooks}
            onChange={(e) => onChange({ webhooks: e.target.value })}
          />
        )}
      </Field>
    </div>
  );
}
