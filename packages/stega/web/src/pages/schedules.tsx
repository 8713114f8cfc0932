import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.js';
import { choicesOf, SelectField, TextField } from '../components/form-fields.js';
import { LoadState, Section, TableRegion } from '../components/layout.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { agentsQuery, getQuery, keys, pathQuery, teamsQuery } from '../data/queries.js';
import { formatDate, formatDateTime } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import type { Schedule, ScheduleOverride, Shift, TeamOnCall } from '../types.js';
import { ScheduleForm } from './schedule-form.js';

const DAY = 86_400_000;

/** The Monday 00:00 UTC of the week holding `ms`. */
function weekStartOf(ms: number): number {
  const midnight = Math.floor(ms / DAY) * DAY;
  const weekday = (new Date(midnight).getUTCDay() + 6) % 7;
  return midnight - weekday * DAY;
}

const schedulesQuery = () => getQuery<{ items: Schedule[] }>(keys.schedules, '/api/schedules');

/**
 * On-call schedules: the list, a week of one schedule's final shifts (gaps marked), its
 * overrides, and the forms to add a schedule and edit one's layers and fallback agent (written
 * by an admin or the team's lead; the API refuses others with 403, shown on the form).
 */
export function SchedulesPage() {
  useTitle('Schedules');
  const schedules = useQuery({ ...schedulesQuery(), refetchInterval: 60_000 });
  const list = schedules.data?.items ?? [];
  const agents = useQuery(agentsQuery());
  const teams = useQuery(teamsQuery());
  const [chosen, setChosen] = useState('');
  const [editing, setEditing] = useState(false);
  const selected = list.find((s) => String(s.id) === chosen) ?? list[0];
  const agentList = agents.data?.items ?? [];
  const teamList = teams.data?.items ?? [];
  return (
    <div className="page">
      <h1>Schedules</h1>
      <p className="muted">
        Who is on call: layers of rotations in each schedule’s time zone, later layers over earlier
        ones, overrides over every layer. A gap is a time nobody is on call: escalations then page
        the fallback agent or the team’s lead.
      </p>
      <Section id="schedules" title={`Schedules (${list.length})`}>
        <LoadState
          loading={schedules.isPending}
          error={schedules.error}
          empty={list.length === 0}
          emptyText="No schedule yet: add one below."
        />
        {list.length > 0 ? (
          <SelectField
            path="schedule"
            idPrefix="schedules"
            label="Schedule"
            issues={[]}
            value={selected ? String(selected.id) : ''}
            onChange={(id) => {
              setChosen(id);
              setEditing(false);
            }}
            choices={list.map((s) => ({
              value: String(s.id),
              label: `${s.name} (${s.time_zone})`,
            }))}
          />
        ) : null}
        {selected && editing ? (
          <ScheduleForm
            key={`edit-${selected.id}`}
            schedule={selected}
            agents={agentList}
            teams={teamList}
            onDone={() => setEditing(false)}
          />
        ) : null}
        {selected && !editing ? (
          <LayersSummary schedule={selected} agents={agentList} onEdit={() => setEditing(true)} />
        ) : null}
      </Section>
      {selected ? <ScheduleWeek key={selected.id} schedule={selected} /> : null}
      {selected ? <Overrides key={`o${selected.id}`} schedule={selected} /> : null}
      <Section id="new-schedule" title="Add a schedule">
        <ScheduleForm agents={agentList} teams={teamList} />
      </Section>
    </div>
  );
}

/** A schedule's layers and fallback agent in words, and the button to edit them. */
function LayersSummary({
  schedule,
  agents,
  onEdit,
}: {
  schedule: Schedule;
  agents: { id: number; name: string }[];
  onEdit: () => void;
}) {
  const nameOf = (id: number) => agents.find((a) => a.id === id)?.name ?? `agent ${id}`;
  return (
    <article className="card" aria-label={`Layers of ${schedule.name}`}>
      <ol className="levels">
        {schedule.layers.map((layer, i) => (
          <li key={i}>
            {layer.name}: {layer.participant_ids.map(nameOf).join(' → ') || 'nobody'}, shifts of{' '}
            {layer.shift_length}{' '}
            {layer.shift_length === 1 ? layer.shift_unit.slice(0, -1) : layer.shift_unit} handing
            off at {layer.handoff_time} from {layer.start_date}
            {layer.restrictions.length > 0
              ? `; only ${layer.restrictions
                  .map((r) => `${r.days.map((d) => d.slice(0, 3)).join(' ')} ${r.start}–${r.end}`)
                  .join(', ')}`
              : ''}
          </li>
        ))}
      </ol>
      <p>
        In a gap an escalation pages{' '}
        {schedule.fallback_agent_id === null
          ? 'the team’s lead'
          : nameOf(schedule.fallback_agent_id)}
        .
      </p>
      <button type="button" className="secondary small" onClick={onEdit}>
        Edit {schedule.name}
      </button>
    </article>
  );
}

function ScheduleWeek({ schedule }: { schedule: Schedule }) {
  const [weekStart, setWeekStart] = useState(() => weekStartOf(Date.now()));
  const from = new Date(weekStart).toISOString();
  const to = new Date(weekStart + 7 * DAY).toISOString();
  const shifts = useQuery({
    ...pathQuery<{ items: Shift[] }>(
      keys.schedules,
      `/api/schedules/${schedule.id}/shifts?from=${from}&to=${to}`,
    ),
    refetchInterval: 60_000,
  });
  const items = shifts.data?.items ?? [];
  const gaps = items.filter((s) => s.source === 'gap').length;
  return (
    <Section
      id="week"
      title={`Week of ${formatDate(from)}`}
      actions={
        <>
          <button
            type="button"
            className="secondary small"
            onClick={() => setWeekStart(weekStart - 7 * DAY)}
          >
            Previous week
          </button>
          <button
            type="button"
            className="secondary small"
            onClick={() => setWeekStart(weekStart + 7 * DAY)}
          >
            Next week
          </button>
        </>
      }
    >
      <p className="muted">
        Final shifts of {schedule.name} (layers flattened, restrictions applied, overrides on top);{' '}
        {gaps === 0 ? 'no gap this week.' : `${gaps} ${gaps === 1 ? 'gap' : 'gaps'} this week.`}
      </p>
      <LoadState loading={shifts.isPending} error={shifts.error} empty={items.length === 0} />
      <TableRegion label={`Shifts of ${schedule.name}`}>
        <table>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">Until</th>
              <th scope="col">On call</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {items.map((shift) => (
              <tr
                key={shift.start}
                className={shift.source === 'gap' ? 'gap' : undefined}
                data-source={shift.source}
              >
                <td>{formatDateTime(shift.start)}</td>
                <td>{formatDateTime(shift.end)}</td>
                <td>{shift.agent ? shift.agent.name : <strong>Nobody (gap)</strong>}</td>
                <td>
                  {shift.source === 'override'
                    ? 'override'
                    : shift.source === 'layer'
                      ? (schedule.layers[shift.layer ?? 0]?.name ?? 'layer')
                      : 'no layer has anyone'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableRegion>
    </Section>
  );
}

function Overrides({ schedule }: { schedule: Schedule }) {
  const now = Date.now();
  const path = `/api/schedules/${schedule.id}/overrides?from=${new Date(now - DAY).toISOString()}&to=${new Date(now + 60 * DAY).toISOString()}`;
  const overrides = useQuery({
    ...pathQuery<{ items: ScheduleOverride[] }>(keys.schedules, path),
    refetchInterval: 60_000,
  });
  const agents = useQuery(agentsQuery());
  const [agent, setAgent] = useState('');
  const [startsAt, setStartsAt] = useState('');
  const [endsAt, setEndsAt] = useState('');
  const save = useSave([keys.schedules]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save.run(async () => {
      // datetime-local values are read in the browser's zone
      const instant = (value: string) => (value ? new Date(value).toISOString() : value);
      await api('POST', `/api/schedules/${schedule.id}/overrides`, {
        agent_id: Number(agent),
        starts_at: instant(startsAt),
        ends_at: instant(endsAt),
      });
      save.setSaved('Override added.');
    });
  };
  const remove = (id: number) =>
    save.run(async () => {
      await api('DELETE', `/api/schedules/${schedule.id}/overrides/${id}`);
      save.setSaved('Override removed.');
    });
  const items = overrides.data?.items ?? [];
  return (
    <Section id="overrides" title="Overrides (the next 60 days)">
      <SaveFeedback
        save={save}
        idPrefix="override"
        knownPaths={(p) => ['agent_id', 'starts_at', 'ends_at'].includes(p)}
      />
      <LoadState
        loading={overrides.isPending}
        error={overrides.error}
        empty={items.length === 0}
        emptyText="No override."
      />
      {items.length > 0 ? (
        <ul className="members">
          {items.map((o) => (
            <li key={o.id} data-override-id={o.id}>
              {o.agent?.name ?? `agent ${o.agent_id}`} covers {formatDateTime(o.starts_at)} –{' '}
              {formatDateTime(o.ends_at)} <span className="muted">(by {o.created_by})</span>{' '}
              <button type="button" className="link-button" onClick={() => void remove(o.id)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <form onSubmit={submit} noValidate className="form" aria-label="New override">
        <div className="row">
          <SelectField
            path="agent_id"
            idPrefix="override"
            label="Who covers"
            issues={save.issues}
            value={agent}
            onChange={setAgent}
            choices={choicesOf(agents.data?.items ?? [], [{ value: '', label: 'Choose an agent' }])}
          />
          <TextField
            path="starts_at"
            idPrefix="override"
            label="From"
            issues={save.issues}
            value={startsAt}
            onChange={setStartsAt}
            input={{ type: 'datetime-local' }}
          />
          <TextField
            path="ends_at"
            idPrefix="override"
            label="Until"
            issues={save.issues}
            value={endsAt}
            onChange={setEndsAt}
            input={{ type: 'datetime-local' }}
          />
        </div>
        <div className="actions">
          <button type="submit" className="primary" disabled={save.busy}>
            Add override
          </button>
        </div>
      </form>
    </Section>
  );
}

/** "On call now" for the header: each team's schedules and who is on call in them. */
export function OnCallNow() {
  const onCall = useQuery({
    ...getQuery<{ items: TeamOnCall[] }>([...keys.schedules, 'now'], '/api/on-call'),
    refetchInterval: 60_000,
  });
  const entries = (onCall.data?.items ?? []).flatMap((team) =>
    team.schedules.map((s) => ({ team: team.team_name, ...s })),
  );
  if (entries.length === 0) return null;
  return (
    <p className="on-call-now" data-testid="on-call-now">
      On call:{' '}
      {entries.map((e, i) => (
        <span key={e.schedule_id} data-schedule-id={e.schedule_id}>
          {i > 0 ? ' · ' : ''}
          {e.team}: {e.agent ? e.agent.name : <strong>nobody</strong>}
        </span>
      ))}
    </p>
  );
}
