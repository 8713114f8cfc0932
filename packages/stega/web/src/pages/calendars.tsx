import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Issue } from '../api.js';
import { DataTable } from '../components/data-table.js';
import { Field, FieldError, fieldId, issueAt } from '../components/field.js';
import { TimeZoneField } from '../components/form-fields.js';
import { LoadState } from '../components/layout.js';
import { RecordLoading } from '../components/record-loading.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { calendarQuery, calendarsQuery, keys } from '../data/queries.js';
import { formatDateTime, label } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import { type Calendar, WEEKDAYS, type Weekday } from '../types.js';

/** Business calendars: the hours SLA targets count in. */
export function CalendarsPage({ admin }: { admin: boolean }) {
  useTitle('Calendars');
  const calendars = useQuery({ ...calendarsQuery(), refetchInterval: 15_000 });
  const items = calendars.data?.items ?? [];
  return (
    <div className="page">
      <div className="page-head">
        <h1>Business calendars</h1>
        {admin ? (
          <Link to="/calendars/new" className="button primary">
            New calendar
          </Link>
        ) : null}
      </div>
      <LoadState
        loading={calendars.isPending}
        error={calendars.error}
        empty={items.length === 0}
        emptyText="No calendar yet."
      />
      {items.length > 0 ? (
        <DataTable<Calendar>
          label="Calendars"
          rows={items}
          rowKey={(c) => c.id}
          columns={[
            { header: 'Name', cell: (c) => <Link to={`/calendars/${c.id}`}>{c.name}</Link> },
            { header: 'Time zone', cell: (c) => c.time_zone },
            { header: 'Hours', cell: (c) => (c.always_open ? '24x7' : hoursSummary(c)) },
            {
              header: 'Holidays',
              num: true,
              cell: (c) => (c.always_open ? '—' : c.holidays.length),
            },
          ]}
        />
      ) : null}
    </div>
  );
}

function hoursSummary(c: Calendar): string {
  const days = WEEKDAYS.filter((d) => (c.weekly_hours[d]?.length ?? 0) > 0);
  if (days.length === 0) return 'closed';
  return days
    .map(
      (d) =>
        `${d.slice(0, 3)} ${(c.weekly_hours[d] ?? []).map((i) => `${i.start}–${i.end}`).join(', ')}`,
    )
    .join('; ');
}

interface Interval {
  start: string;
  end: string;
}
interface HolidayDraft {
  date: string;
  recurring: boolean;
  name: string;
}
interface CalendarDraft {
  name: string;
  time_zone: string;
  always_open: boolean;
  weekly_hours: Record<Weekday, Interval[]>;
  holidays: HolidayDraft[];
}

const OFFICE: Interval[] = [{ start: '09:00', end: '17:00' }];
const NEW_CALENDAR: CalendarDraft = {
  name: '',
  time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  always_open: false,
  weekly_hours: {
    monday: OFFICE,
    tuesday: OFFICE,
    wednesday: OFFICE,
    thursday: OFFICE,
    friday: OFFICE,
    saturday: [],
    sunday: [],
  },
  holidays: [],
};

function draftOf(c: Calendar): CalendarDraft {
  const weekly = Object.fromEntries(
    WEEKDAYS.map((d) => [d, (c.weekly_hours[d] ?? []).map((i) => ({ ...i }))]),
  ) as Record<Weekday, Interval[]>;
  return {
    name: c.name,
    time_zone: c.time_zone,
    always_open: c.always_open,
    weekly_hours: weekly,
    holidays: c.holidays.map((h) => ({ date: h.date, recurring: h.recurring, name: h.name ?? '' })),
  };
}

function bodyOf(d: CalendarDraft) {
  return {
    name: d.name,
    time_zone: d.time_zone.trim(),
    always_open: d.always_open,
    weekly_hours: Object.fromEntries(
      WEEKDAYS.filter((day) => d.weekly_hours[day].length > 0).map((day) => [
        day,
        d.weekly_hours[day].map((i) => ({ start: i.start.trim(), end: i.end.trim() })),
      ]),
    ),
    holidays: d.holidays.map((h) => ({
      date: h.date.trim(),
      recurring: h.recurring,
      ...(h.name.trim() ? { name: h.name.trim() } : {}),
    })),
  };
}

/** Issues that have a field in the form (others are listed in the summary only). */
function knownPath(path: string): boolean {
  return /^(name|time_zone|always_open|weekly_hours(\.\w+(\[\d+\](\.(start|end))?)?)?|holidays(\[\d+\](\.(date|recurring|name))?)?)$/.test(
    path,
  );
}

/** View (any token) or edit (admin) a business calendar; errors appear next to each field. */
export function CalendarEditPage({ id, admin }: { id?: number; admin: boolean }) {
  const editing = id !== undefined;
  useTitle(editing ? 'Calendar' : 'New calendar');
  const record = useQuery({ ...calendarQuery(id ?? 0), enabled: editing });
  if (editing && !record.data) {
    return (
      <RecordLoading
        back="/calendars"
        backText="← Calendars"
        title="Calendar"
        error={record.error ?? undefined}
      />
    );
  }
  return <CalendarForm id={id} calendar={record.data} admin={admin} />;
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

  const setDay = (day: Weekday, intervals: Interval[]) =>
    setDraft((d) => ({ ...d, weekly_hours: { ...d.weekly_hours, [day]: intervals } }));
  const setHoliday = (index: number, change: Partial<HolidayDraft>) =>
    setDraft((d) => ({
      ...d,
      holidays: d.holidays.map((h, i) => (i === index ? { ...h, ...change } : h)),
    }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const body = bodyOf(draft);
      if (editing) {
        const c = await api<Calendar>('PATCH', `/api/calendars/${id}`, body);
        setLoaded(c);
        setDraft(draftOf(c));
        setSaved('Saved. Running SLA clocks keep their due times until they next change.');
      } else {
        const c = await api<Calendar>('POST', '/api/calendars', body);
        navigate(`/calendars/${c.id}`, { replace: true });
      }
    });
  };

  const weeklyError = issueAt(issues, 'weekly_hours');
  const holidaysError = issueAt(issues, 'holidays');

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
      <SaveFeedback save={save} knownPaths={knownPath} />
      <form onSubmit={submit} noValidate className="form">
        <fieldset disabled={!admin} className="plain-fieldset">
          <div className="row">
            <Field path="name" label="Name" issues={issues}>
              {(aria) => (
                <input
                  {...aria}
                  value={draft.name}
                  onChange={(e) => setDraft((d) => ({ ...d, name: e.target.value }))}
                />
              )}
            </Field>
            <TimeZoneField
              path="time_zone"
              label="Time zone"
              issues={issues}
              hint="IANA name, e.g. Europe/Lisbon."
              value={draft.time_zone}
              onChange={(time_zone) => setDraft((d) => ({ ...d, time_zone }))}
            />
          </div>
          <label className="check">
            <input
              type="checkbox"
              id={fieldId('always_open')}
              checked={draft.always_open}
              onChange={(e) => setDraft((d) => ({ ...d, always_open: e.target.checked }))}
            />
            Open 24x7 (every minute counts; hours and holidays are ignored)
          </label>

          {draft.always_open ? (
            <p className="muted">Weekly hours and holidays do not apply to a 24x7 calendar.</p>
          ) : (
            <>
              <fieldset className="group">
                <legend>Weekly business hours</legend>
                <p className="hint">
                  Times are HH:mm in the calendar’s zone; an interval ends after it starts (24:00 is
                  midnight). A day without hours is closed.
                </p>
                <FieldError id={`${fieldId('weekly_hours')}-error`} message={weeklyError} />
                {WEEKDAYS.map((day) => (
                  <div className="day" key={day} role="group" aria-labelledby={`day-${day}`}>
                    <span className="day-name" id={`day-${day}`}>
                      {label(day)}
                    </span>
                    <div className="day-hours">
                      {draft.weekly_hours[day].length === 0 ? (
                        <span className="muted small">Closed</span>
                      ) : null}
                      {draft.weekly_hours[day].map((interval, i) => (
                        <IntervalRow
                          key={i}
                          day={day}
                          index={i}
                          interval={interval}
                          issues={issues}
                          onChange={(next) =>
                            setDay(
                              day,
                              draft.weekly_hours[day].map((x, j) => (j === i ? next : x)),
                            )
                          }
                          onRemove={() =>
                            setDay(
                              day,
                              draft.weekly_hours[day].filter((_, j) => j !== i),
                            )
                          }
                        />
                      ))}
                      <button
                        type="button"
                        className="secondary small"
                        onClick={() =>
                          setDay(day, [
                            ...draft.weekly_hours[day],
                            { start: '09:00', end: '17:00' },
                          ])
                        }
                        aria-label={`Add hours on ${label(day)}`}
                      >
                        + Add hours
                      </button>
                      <FieldError
                        id={`${fieldId(`weekly_hours.${day}`)}-error`}
                        message={issueAt(issues, `weekly_hours.${day}`)}
                      />
                    </div>
                  </div>
                ))}
              </fieldset>

              <fieldset className="group">
                <legend>Holidays</legend>
                <FieldError id={`${fieldId('holidays')}-error`} message={holidaysError} />
                {draft.holidays.length === 0 ? <p className="muted small">None.</p> : null}
                {draft.holidays.map((h, i) => {
                  const base = `holidays[${i}]`;
                  return (
                    <div className="holiday" key={i}>
                      <Field
                        path={`${base}.date`}
                        label={`Holiday ${i + 1} date (YYYY-MM-DD)`}
                        issues={issues}
                      >
                        {(aria) => (
                          <input
                            {...aria}
                            className="date"
                            placeholder="2026-12-25"
                            value={h.date}
                            onChange={(e) => setHoliday(i, { date: e.target.value })}
                          />
                        )}
                      </Field>
                      <Field path={`${base}.name`} label={`Holiday ${i + 1} name`} issues={issues}>
                        {(aria) => (
                          <input
                            {...aria}
                            value={h.name}
                            onChange={(e) => setHoliday(i, { name: e.target.value })}
                          />
                        )}
                      </Field>
                      <div className="holiday-actions">
                        <label className="check">
                          <input
                            type="checkbox"
                            id={fieldId(`${base}.recurring`)}
                            checked={h.recurring}
                            onChange={(e) => setHoliday(i, { recurring: e.target.checked })}
                          />
                          Every year
                        </label>
                        <button
                          type="button"
                          className="secondary small"
                          onClick={() =>
                            setDraft((d) => ({
                              ...d,
                              holidays: d.holidays.filter((_, j) => j !== i),
                            }))
                          }
                        >
                          Remove holiday {i + 1}
                        </button>
                      </div>
                    </div>
                  );
                })}
                <button
                  type="button"
                  className="secondary small"
                  onClick={() =>
                    setDraft((d) => ({
                      ...d,
                      holidays: [...d.holidays, { date: '', recurring: false, name: '' }],
                    }))
                  }
                >
                  Add a holiday
                </button>
              </fieldset>
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

/**
 * One business interval: "09:00 – 17:00". The labels are read by screen readers and hidden on
 * screen (the day is the row's visible name); each field's error shows under the row.
 */
function IntervalRow({
  day,
  index,
  interval,
  issues,
  onChange,
  onRemove,
}: {
  day: Weekday;
  index: number;
  interval: Interval;
  issues: Issue[];
  onChange: (next: Interval) => void;
  onRemove: () => void;
}) {
  const base = `weekly_hours.${day}[${index}]`;
  const name = `${label(day)} ${index + 1}`;
  const parts = [
    { key: 'start' as const, path: `${base}.start`, text: `${name} from`, placeholder: '09:00' },
    { key: 'end' as const, path: `${base}.end`, text: `${name} to`, placeholder: '17:00' },
  ];
  const rowError = issueAt(issues, base);
  return (
    <div className="interval">
      <div className="interval-inputs">
        {parts.map((part, n) => {
          const id = fieldId(part.path);
          const error = issueAt(issues, part.path);
          const described = [error ? `${id}-error` : '', rowError ? `${fieldId(base)}-error` : '']
            .filter(Boolean)
            .join(' ');
          return (
            <span key={part.key} className="interval-part">
              {n === 1 ? <span aria-hidden="true">–</span> : null}
              <label className="visually-hidden" htmlFor={id}>
                {part.text}
              </label>
              <input
                id={id}
                className="time"
                placeholder={part.placeholder}
                inputMode="numeric"
                value={interval[part.key]}
                onChange={(e) => onChange({ ...interval, [part.key]: e.target.value })}
                aria-invalid={error || rowError ? true : undefined}
                aria-describedby={described || undefined}
              />
            </span>
          );
        })}
        <button
          type="button"
          className="secondary small"
          onClick={onRemove}
          aria-label={`Remove ${name}`}
        >
          Remove
        </button>
      </div>
      {parts.map((part) => (
        <FieldError
          key={part.key}
          id={`${fieldId(part.path)}-error`}
          message={(() => {
            const error = issueAt(issues, part.path);
            return error ? `${part.key === 'start' ? 'From' : 'To'}: ${error}` : undefined;
          })()}
        />
      ))}
      <FieldError id={`${fieldId(base)}-error`} message={rowError} />
    </div>
  );
}
