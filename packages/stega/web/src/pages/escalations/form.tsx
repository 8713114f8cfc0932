import { type FormEvent, useState } from 'react';
import { api } from '../../api.js';
import { TextField } from '../../components/form-fields.js';
import { SaveFeedback } from '../../components/save-feedback.js';
import { keys } from '../../data/queries.js';
import { useSave } from '../../hooks/use-save.js';
import type { Agent, EscalationPolicy } from '../../types.js';
import { draftOf, EMPTY_LEVEL, type LevelDraft, levelOf, nextLevel } from './draft.js';
import { LevelFields } from './level-fields.js';

/**
 * Adds or edits an escalation policy (admin), or shows one read-only (`readOnly`: its secrets
 * as the API masked them). Levels are saved as a whole: every level's channels are sent as
 * loaded, which for an admin is in full, so an unedited Slack URL or PagerDuty key stays.
 */
export function PolicyForm({
  policy,
  agents,
  readOnly = false,
  onDone,
}: {
  policy?: EscalationPolicy;
  agents: Agent[];
  readOnly?: boolean;
  onDone?: () => void;
}) {
  const [name, setName] = useState(policy?.name ?? '');
  const [levels, setLevels] = useState<LevelDraft[]>(
    policy ? policy.levels.map(draftOf) : [EMPTY_LEVEL],
  );
  // the revision the draft was made from: what the save's If-Match names
  const [revision, setRevision] = useState(policy?.revision);
  const save = useSave([keys.escalationPolicies]);
  const prefix = policy ? `escalation-${policy.id}` : 'new-escalation';
  // someone else saved first (412): start again from their version
  const reload = (id: number) =>
    save.reload(async () => {
      const fresh = await api<EscalationPolicy>('GET', `/api/escalation-policies/${id}`);
      setName(fresh.name);
      setLevels(fresh.levels.map(draftOf));
      setRevision(fresh.revision);
    });
  const setLevel = (index: number, change: Partial<LevelDraft>) =>
    setLevels((all) => all.map((l, i) => (i === index ? { ...l, ...change } : l)));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (readOnly) return;
    const done = await save.run(async () => {
      const body = { name, levels: levels.map(levelOf) };
      const saved = policy
        ? await api<EscalationPolicy>('PATCH', `/api/escalation-policies/${policy.id}`, body, {
            ifMatch: revision,
          })
        : await api<EscalationPolicy>('POST', '/api/escalation-policies', body);
      if (!policy) {
        setName('');
        setLevels([EMPTY_LEVEL]);
      } else setRevision(saved.revision);
      save.setSaved(`Escalation policy ${saved.name} saved.`);
    });
    // after the lists fetched again: opened at once, the form starts from what was saved
    if (done) onDone?.();
  };
  const title = policy
    ? `${readOnly ? 'View' : 'Edit'} escalation policy ${policy.name}`
    : 'New escalation policy';
  return (
    <form onSubmit={submit} noValidate className="form" aria-label={title}>
      <h3>{policy ? `${readOnly ? '' : 'Edit '}${policy.name}` : 'Add an escalation policy'}</h3>
      {readOnly ? (
        <p className="notice">Only an admin token can change escalation policies.</p>
      ) : null}
      <SaveFeedback
        save={save}
        idPrefix={prefix}
        onReload={policy ? () => reload(policy.id) : undefined}
      />
      <fieldset disabled={readOnly} className="plain-fieldset">
        <TextField
          path="name"
          idPrefix={prefix}
          label="Policy name"
          issues={save.issues}
          value={name}
          onChange={setName}
        />
        {levels.map((level, i) => (
          <LevelFields
            // levels have no identity of their own: the API knows a level by its place
            key={i}
            index={i}
            level={level}
            agents={agents}
            idPrefix={prefix}
            issues={save.issues}
            onChange={(change) => setLevel(i, change)}
            onRemove={
              levels.length > 1
                ? () => setLevels((all) => all.filter((_, j) => j !== i))
                : undefined
            }
          />
        ))}
      </fieldset>
      <div className="actions">
        {readOnly ? null : (
          <>
            <button
              type="button"
              className="secondary"
              onClick={() => setLevels((all) => [...all, nextLevel(all.at(-1))])}
            >
              Add a level
            </button>
            <button type="submit" className="primary" disabled={save.busy}>
              {policy ? 'Save escalation policy' : 'Add escalation policy'}
            </button>
          </>
        )}
        {onDone && policy ? (
          <button type="button" className="secondary" onClick={onDone}>
            {readOnly ? 'Close' : 'Cancel'}
          </button>
        ) : null}
      </div>
    </form>
  );
}
