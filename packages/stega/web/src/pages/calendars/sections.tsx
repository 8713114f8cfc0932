import type { Issue } from '../../api.js';
import { FieldError, fieldId, issueAt } from '../../components/field.js';
import { CheckField, TextField } from '../../components/form-fields.js';
import { label } from '../../format.js';
import { WEEKDAYS, type Weekday } from '../../types.js';

import type { CalendarDraft, HolidayDraft, Interval, SetCalendarDraft } from './draft.js';

interface SectionProps {
  draft: CalendarDraft;
  setDraft: SetCalendarDraft;
  issues: Issue[];
}

/** The business hours of each weekday: intervals to add, change and remove. */
export function WeeklyHoursSection({ draft, setDraft, issues }: SectionProps) {
  const setDay = (day: Weekday, intervals: Interval[]) =>
    setDraft((d) => ({ ...d, weekly_hours: { ...d.weekly_hours, [day]: intervals } }));
  const weeklyError = issueAt(issues, 'weekly_hours');
  return (
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
                setDay(day, [...draft.weekly_hours[day], { start: '09:00', end: '17:00' }])
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
  );
}

/** The calendar's holidays: a date, a name, and whether it recurs every year. */
export function HolidaysSection({ draft, setDraft, issues }: SectionProps) {
  const setHoliday = (index: number, change: Partial<HolidayDraft>) =>
    setDraft((d) => ({
      ...d,
      holidays: d.holidays.map((h, i) => (i === index ? { ...h, ...change } : h)),
    }));
  const holidaysError = issueAt(issues, 'holidays');
  return (
    <fieldset className="group">
      <legend>Holidays</legend>
      <FieldError id={`${fieldId('holidays')}-error`} message={holidaysError} />
      {draft.holidays.length === 0 ? <p className="muted small">None.</p> : null}
      {draft.holidays.map((h, i) => {
        const base = `holidays[${i}]`;
        return (
          <div className="holiday" key={i}>
            <TextField
              path={`${base}.date`}
              label={`Holiday ${i + 1} date (YYYY-MM-DD)`}
              issues={issues}
              value={h.date}
              onChange={(date) => setHoliday(i, { date })}
              input={{ className: 'date', placeholder: '2026-12-25' }}
            />
            <TextField
              path={`${base}.name`}
              label={`Holiday ${i + 1} name`}
              issues={issues}
              value={h.name}
              onChange={(name) => setHoliday(i, { name })}
            />
            <div className="holiday-actions">
              <CheckField
                path={`${base}.recurring`}
                checked={h.recurring}
                onChange={(recurring) => setHoliday(i, { recurring })}
              >
                Every year
              </CheckField>
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
