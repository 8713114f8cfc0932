import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../../api.js';
import { CheckField, TextField, TimeZoneField } from '../../components/form-fields.js';
import { WithRecord } from '../../components/record-loading.js';
import { SaveFeedback } from '../../components/save-feedback.js';
import { calendarQuery, keys } from '../../data/queries.js';
import { formatDateTime } from '../../format.js';
import { useSave } from '../../hooks/use-save.js';
import { useTitle } from '../../hooks/use-title.js';
import type { Calendar } from '../../types.js';
import { bodyOf, type CalendarDraft, draftOf, knownPath, NEW_CALENDAR } from './draft.js';
import { HolidaysSection, WeeklyHoursSection } from './sections.js';

/** View (any token) or edit (admin) a business calendar; errors appear next to each field. */
export function CalendarEditPage({ id, admin }: { id?: number; admin: boolean }) {
  const editing = id !== undefined;
  useTitle(editing ? 'Calendar' : 'New calendar');
  return (
    <WithRecord
      id={id}
      query={calendarQuery}
      back="/calendars"
      backText="← Calendars"
      title="Calendar"
    >
      {(calendar) => <CalendarForm id={id} calendar={calendar} admin={admin} />}
    </WithRecord>
  );
}

/** The calendar's form: it starts from the calendar as loaded, so nothing typed is overwritten. */
function CalendarForm({
  id,
  calendar,
  admin,
}: {
  id?: number;
  calendar?: Calendar;
  admin: boolean;
}) {
  const editing = id !== undefined;
  const navigate = useNavigate();
  const [draft, setDraft] = useState<CalendarDraft>(() =>
    calendar ? draftOf(calendar) : NEW_CALENDAR,
  );
  const [loaded, setLoaded] = useState<Calendar | undefined>(calendar);
  const save = useSave([keys.calendars]);
  const { issues, setSaved, busy, run } = save;

  // someone else saved first (412): start again from their version
  const reload = () =>
    save.reload(async () => {
      const fresh = await api<Calendar>('GET', `/api/calendars/${id}`);
      setLoaded(fresh);
      setDraft(draftOf(fresh));
    });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const body = bodyOf(draft);
      if (editing) {
        const c = await api<Calendar>('PATCH', `/api/calendars/${id}`, body, {
          ifMatch: loaded?.revision,
        });
        setLoaded(c);
        setDraft(draftOf(c));
        setSaved('Saved. Running SLA clocks keep their due times until they next change.');
      } else {
        const c = await api<Calendar>('POST', '/api/calendars', body);
        navigate(`/calendars/${c.id}`, { replace: true });
      }
    });
  };

  return (
    <div className="page narrow-page">
      <p className="breadcrumb">
        <Link to="/calendars">← Calendars</Link>
      </p>
      <h1>{editing ? (loaded?.name ?? 'Calendar') : 'New calendar'}</h1>
      {!admin ? <p className="notice">Only an admin token can change calendars.</p> : null}
      {loaded ? (
        <p className="muted small">Last changed {formatDateTime(loaded.updated_at)}</p>
      ) : null}
      <SaveFeedback save={save} knownPaths={knownPath} onReload={editing ? reload : undefined} />
      <form onSubmit={submit} noValidate className="form">
        <fieldset disabled={!admin} className="plain-fieldset">
          <div className="row">
            <TextField
              path="name"
              label="Name"
              issues={issues}
              value={draft.name}
              onChange={(name) => setDraft((d) => ({ ...d, name }))}
            />
            <TimeZoneField
              path="time_zone"
              label="Time zone"
              issues={issues}
              hint="IANA name, e.g. Europe/Lisbon."
              value={draft.time_zone}
              onChange={(time_zone) => setDraft((d) => ({ ...d, time_zone }))}
            />
          </div>
          <CheckField
            path="always_open"
            checked={draft.always_open}
            onChange={(always_open) => setDraft((d) => ({ ...d, always_open }))}
          >
            Open 24x7 (every minute counts; hours and holidays are ignored)
          </CheckField>

          {draft.always_open ? (
            <p className="muted">Weekly hours and holidays do not apply to a 24x7 calendar.</p>
          ) : (
            <>
              <WeeklyHoursSection draft={draft} setDraft={setDraft} issues={issues} />

              <HolidaysSection draft={draft} setDraft={setDraft} issues={issues} />
            </>
          )}
          {admin ? (
            <div className="actions">
              <button type="submit" className="primary" disabled={busy}>
                {busy ? 'Saving…' : editing ? 'Save calendar' : 'Create calendar'}
              </button>
            </div>
          ) : null}
        </fieldset>
      </form>
    </div>
  );
}
