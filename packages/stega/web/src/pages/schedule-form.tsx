import { type FormEvent, useState } from 'react';
import { api, type Issue } from '../api.js';
import { FieldError, fieldId, issueAt } from '../components/field.js';
import {
  CheckField,
  choicesOf,
  listIssues,
  SelectField,
  TextField,
  TimeZoneField,
} from '../components/form-fields.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { keys } from '../data/queries.js';
import { label } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { type Agent, type Schedule, type Team, WEEKDAYS } from '../types.js';
import {
  draftOf,
  type LayerDraft,
  moved,
  newLayer,
  newRestriction,
  newSchedule,
  type RestrictionDraft,
  type ScheduleDraft,
  type ShiftUnit,
  scheduleOf,
} from './schedule-draft.js';

const UNITS: { value: ShiftUnit; label: string }[] = [
  { value: 'hours', label: 'hours' },
  { value: 'days', label: 'days' },
  { value: 'weeks', label: 'weeks' },
];

/**
 * Adds a schedule, or edits one: its name, zone, team, fallback agent and its layers of
 * rotations (saved as a whole: PATCH replaces every layer). Written by an admin or the lead of
 * the schedule's team; the API's 403 or 400 shows in the summary and next to each field.
 */
export function ScheduleForm({
  schedule,
  agents,
  teams,
  onDone,
}: {
  schedule?: Schedule;
  agents: Agent[];
  teams: Team[];
  onDone?: () => void;
}) {
  const [draft, setDraft] = useState<ScheduleDraft>(() =>
    schedule ? draftOf(schedule) : newSchedule(),
  );
  // the revision the draft was made from: what the save's If-Match names
  const [revision, setRevision] = useState(schedule?.revision);
  const save = useSave([keys.schedules]);
  const prefix = schedule ? `schedule-${schedule.id}` : 'new-schedule';
  // someone else saved first (412): start again from their version
  const reload = (id: number) =>
    save.reload(async () => {
      const fresh = await api<Schedule>('GET', `/api/schedules/${id}`);
      setDraft(draftOf(fresh));
      setRevision(fresh.revision);
    });
  const set = (change: Partial<ScheduleDraft>) => setDraft((d) => ({ ...d, ...change }));
  const setLayer = (index: number, change: Partial<LayerDraft>) =>
    setDraft((d) => ({
      ...d,
      layers: d.layers.map((l, i) => (i === index ? { ...l, ...change } : l)),
    }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const done = await save.run(async () => {
      const body = scheduleOf(draft);
      const saved = schedule
        ? await api<Schedule>('PATCH', `/api/schedules/${schedule.id}`, body, {
            ifMatch: revision,
          })
        : await api<Schedule>('POST', '/api/schedules', body);
      if (!schedule) setDraft(newSchedule());
      else setRevision(saved.revision);
      save.setSaved(`Schedule ${saved.name} saved.`);
    });
    // after the lists fetched again: opened at once, the form starts from what was saved
    if (done) onDone?.();
  };
  const title = schedule ? `Edit schedule ${schedule.name}` : 'New schedule';
  const agentChoices = choicesOf(agents);
  return (
    <form onSubmit={submit} noValidate className="form" aria-label={title}>
      <h3>{schedule ? `Edit ${schedule.name}` : 'Add a schedule'}</h3>
      <SaveFeedback
        save={save}
        idPrefix={prefix}
        onReload={schedule ? () => reload(schedule.id) : undefined}
      />
      <div className="row">
        <TextField
          path="name"
          idPrefix={prefix}
          label="Schedule name"
          issues={save.issues}
          value={draft.name}
          onChange={(name) => set({ name })}
        />
        <TimeZoneField
          path="time_zone"
          idPrefix={prefix}
          label="Time zone"
          hint="Handoff times, start dates and restrictions are read in it, e.g. Europe/Lisbon."
          issues={save.issues}
          value={draft.time_zone}
          onChange={(time_zone) => set({ time_zone })}
        />
      </div>
      <div className="row">
        <SelectField
          path="team_id"
          idPrefix={prefix}
          label="Team"
          hint="Its lead may edit the schedule; the header shows it as the team’s on call."
          issues={save.issues}
          value={draft.team_id}
          onChange={(team_id) => set({ team_id })}
          choices={choicesOf(teams, [{ value: '', label: 'No team' }])}
        />
        <SelectField
          path="fallback_agent_id"
          idPrefix={prefix}
          label="Fallback agent"
          hint="Paged in a gap when an escalation targets this schedule."
          issues={save.issues}
          value={draft.fallback_agent_id}
          onChange={(fallback_agent_id) => set({ fallback_agent_id })}
          choices={[{ value: '', label: 'None: the team’s lead' }, ...agentChoices]}
        />
      </div>
      {draft.layers.map((layer, i) => (
        <LayerFields
          // layers have no identity of their own: the API knows a layer by its place
          key={i}
          index={i}
          layer={layer}
          agents={agents}
          idPrefix={prefix}
          issues={save.issues}
          onChange={(change) => setLayer(i, change)}
          onRemove={
            draft.layers.length > 1
              ? () => set({ layers: draft.layers.filter((_, j) => j !== i) })
              : undefined
          }
        />
      ))}
      <FieldError
        id={`${fieldId(`${prefix}.layers`)}-error`}
        message={issueAt(save.issues, 'layers')}
      />
      <div className="actions">
        <button
          type="button"
          className="secondary"
          onClick={() => set({ layers: [...draft.layers, newLayer()] })}
        >
          Add a layer
        </button>
        <button type="submit" className="primary" disabled={save.busy}>
          {schedule ? 'Save schedule' : 'Add schedule'}
        </button>
        {onDone && schedule ? (
          <button type="button" className="secondary" onClick={onDone}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

interface LayerProps {
  index: number;
  layer: LayerDraft;
  agents: Agent[];
  idPrefix: string;
  issues: Issue[];
  onChange: (change: Partial<LayerDraft>) => void;
}

/** One layer: its participants in order, shift length and unit, handoff, restrictions. */
function LayerFields({ onRemove, ...props }: LayerProps & { onRemove: (() => void) | undefined }) {
  const { index, layer, idPrefix, issues, onChange } = props;
  const n = index + 1;
  const base = `layers[${index}]`;
  return (
    <fieldset className="group" aria-label={`Layer ${n}`} data-layer={index}>
      <legend>Layer {n}</legend>
      <p className="hint">
        {index === 0 ? 'The lowest layer.' : `Over layer ${index} wherever it has someone on call.`}
      </p>
      <TextField
        path={`${base}.name`}
        idPrefix={idPrefix}
        label={`Layer ${n} name`}
        hint="Optional; shown in the week view."
        issues={issues}
        value={layer.name}
        onChange={(name) => onChange({ name })}
      />
      <Participants {...props} />
      <div className="row">
        <TextField
          path={`${base}.shift_length`}
          idPrefix={idPrefix}
          label={`Layer ${n} shift length`}
          issues={issues}
          value={layer.shift_length}
          onChange={(shift_length) => onChange({ shift_length })}
          input={{ inputMode: 'numeric' }}
        />
        <SelectField
          path={`${base}.shift_unit`}
          idPrefix={idPrefix}
          label={`Layer ${n} shift unit`}
          issues={issues}
          value={layer.shift_unit}
          onChange={(unit) => onChange({ shift_unit: unit as ShiftUnit })}
          choices={UNITS}
        />
        <TextField
          path={`${base}.handoff_time`}
          idPrefix={idPrefix}
          label={`Layer ${n} handoff time`}
          hint="In the schedule’s zone."
          hintAfter
          issues={issues}
          value={layer.handoff_time}
          onChange={(handoff_time) => onChange({ handoff_time })}
          input={{ type: 'time' }}
        />
        <TextField
          path={`${base}.start_date`}
          idPrefix={idPrefix}
          label={`Layer ${n} first handoff on`}
          issues={issues}
          value={layer.start_date}
          onChange={(start_date) => onChange({ start_date })}
          input={{ type: 'date' }}
        />
      </div>
      <Restrictions {...props} />
      {onRemove ? (
        <button type="button" className="secondary small" onClick={onRemove}>
          Remove layer {n}
        </button>
      ) : null}
    </fieldset>
  );
}

/** The rotation: who takes the shifts, in order; moved up and down, added, removed. */
function Participants({ index, layer, agents, idPrefix, issues, onChange }: LayerProps) {
  const n = index + 1;
  const path = `layers[${index}].participant_ids`;
  const nameOf = (id: number) => agents.find((a) => a.id === id)?.name ?? `agent ${id}`;
  const list = layer.participants;
  // the rotation's own issue and its turns' (`participant_ids[2]`: "participant 3: …") beside the picker
  const message = listIssues(issues, path, 'participant');
  return (
    <div className="participants">
      <p>
        <strong>Layer {n} rotation</strong>{' '}
        <span className="muted">(each takes one shift in turn, from the first handoff)</span>
      </p>
      {list.length === 0 ? (
        <p className="muted">Nobody yet.</p>
      ) : (
        <ol className="members" aria-label={`Layer ${n} participants`}>
          {list.map((id, i) => (
            <li key={`${i}-${id}`}>
              {nameOf(id)}{' '}
              <button
                type="button"
                className="link-button"
                aria-label={`Move ${nameOf(id)} up in layer ${n}`}
                disabled={i === 0}
                onClick={() => onChange({ participants: moved(list, i, -1) })}
              >
                Up
              </button>{' '}
              <button
                type="button"
                className="link-button"
                aria-label={`Move ${nameOf(id)} down in layer ${n}`}
                disabled={i === list.length - 1}
                onClick={() => onChange({ participants: moved(list, i, 1) })}
              >
                Down
              </button>{' '}
              <button
                type="button"
                className="link-button"
                aria-label={`Remove ${nameOf(id)} from layer ${n}`}
                onClick={() => onChange({ participants: list.filter((_, j) => j !== i) })}
              >
                Remove
              </button>
            </li>
          ))}
        </ol>
      )}
      <SelectField
        path={path}
        idPrefix={idPrefix}
        label={`Add to layer ${n}`}
        hint="Choosing an agent adds them at the end of the rotation."
        issues={message ? [{ path, message }] : []}
        value=""
        onChange={(picked) => {
          // picking is adding: a pick left waiting for a button was lost at save
          if (picked !== '') onChange({ participants: [...list, Number(picked)] });
        }}
        choices={choicesOf(agents, [{ value: '', label: 'Choose an agent' }])}
      />
    </div>
  );
}

/** The windows the layer has someone in (none: all day, every day). */
function Restrictions({ index, layer, idPrefix, issues, onChange }: LayerProps) {
  const n = index + 1;
  const setOne = (r: number, change: Partial<RestrictionDraft>) =>
    onChange({
      restrictions: layer.restrictions.map((x, i) => (i === r ? { ...x, ...change } : x)),
    });
  return (
    <fieldset className="group" aria-label={`Layer ${n} restrictions`}>
      <legend>Layer {n} restrictions</legend>
      <p className="hint">
        {layer.restrictions.length === 0
          ? 'None: the layer has someone on call all day, every day.'
          : 'The layer has someone on call only inside these windows; an end at or before the start ends the next day, and 00:00 to 00:00 is the whole day.'}
      </p>
      {layer.restrictions.map((restriction, r) => {
        const base = `layers[${index}].restrictions[${r}]`;
        const m = r + 1;
        const daysPath = `${base}.days`;
        return (
          <div key={r} className="restriction" data-restriction={r}>
            <fieldset aria-label={`Layer ${n} window ${m} days`}>
              <legend>Window {m} days</legend>
              <div className="row">
                {WEEKDAYS.map((day, d) => (
                  <CheckField
                    key={day}
                    path={d === 0 ? `${idPrefix}.${daysPath}` : undefined}
                    checked={restriction.days.includes(day)}
                    onChange={(on) =>
                      setOne(r, {
                        days: WEEKDAYS.filter((w) =>
                          w === day ? on : restriction.days.includes(w),
                        ),
                      })
                    }
                  >
                    {label(day)}
                  </CheckField>
                ))}
              </div>
              <FieldError
                id={`${fieldId(`${idPrefix}.${daysPath}`)}-error`}
                message={issueAt(issues, daysPath)}
              />
            </fieldset>
            <div className="row">
              <TextField
                path={`${base}.start`}
                idPrefix={idPrefix}
                label={`Layer ${n} window ${m} from`}
                issues={issues}
                value={restriction.start}
                onChange={(start) => setOne(r, { start })}
                input={{ type: 'time' }}
              />
              <TextField
                path={`${base}.end`}
                idPrefix={idPrefix}
                label={`Layer ${n} window ${m} until`}
                issues={issues}
                value={restriction.end}
                onChange={(end) => setOne(r, { end })}
                input={{ type: 'time' }}
              />
              <button
                type="button"
                className="secondary small"
                onClick={() =>
                  onChange({ restrictions: layer.restrictions.filter((_, i) => i !== r) })
                }
              >
                Remove window {m} of layer {n}
              </button>
            </div>
          </div>
        );
      })}
      <FieldError
        id={`${fieldId(`${idPrefix}.layers[${index}].restrictions`)}-error`}
        message={issueAt(issues, `layers[${index}].restrictions`)}
      />
      <button
        type="button"
        className="secondary small"
        onClick={() => onChange({ restrictions: [...layer.restrictions, newRestriction()] })}
      >
        Add a window to layer {n}
      </button>
    </fieldset>
  );
}
