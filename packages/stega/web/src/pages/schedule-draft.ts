import type { Schedule, Weekday } from '../types.js';

/** A schedule as its form edits it (text as typed), and what the API is sent from it. */

export type ShiftUnit = Schedule['layers'][number]['shift_unit'];

export interface RestrictionDraft {
  days: Weekday[];
  start: string;
  end: string;
}

export interface LayerDraft {
  name: string;
  /** Agent ids in rotation order (an agent may be in it twice). */
  participants: number[];
  shift_length: string;
  shift_unit: ShiftUnit;
  handoff_time: string;
  start_date: string;
  restrictions: RestrictionDraft[];
}

export interface ScheduleDraft {
  name: string;
  time_zone: string;
  /** '' for none. */
  team_id: string;
  /** '' for none: a gap pages the team's lead. */
  fallback_agent_id: string;
  layers: LayerDraft[];
}

/** Today in the browser's zone, as the API's date (yyyy-mm-dd). */
export function todayLocal(): string {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** A new layer: weekly shifts handing off at 09:00 from today, nobody in it yet. */
export const newLayer = (): LayerDraft => ({
  name: '',
  participants: [],
  shift_length: '1',
  shift_unit: 'weeks',
  handoff_time: '09:00',
  start_date: todayLocal(),
  restrictions: [],
});

/** A new restriction: weekdays, office hours. */
export const newRestriction = (): RestrictionDraft => ({
  days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
  start: '09:00',
  end: '17:00',
});

export function newSchedule(): ScheduleDraft {
  let zone = 'UTC';
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    // keep UTC
  }
  return {
    name: '',
    time_zone: zone,
    team_id: '',
    fallback_agent_id: '',
    layers: [newLayer()],
  };
}

export function draftOf(schedule: Schedule): ScheduleDraft {
  return {
    name: schedule.name,
    time_zone: schedule.time_zone,
    team_id: schedule.team_id === null ? '' : String(schedule.team_id),
    fallback_agent_id:
      schedule.fallback_agent_id === null ? '' : String(schedule.fallback_agent_id),
    layers: schedule.layers.map((layer) => ({
      name: layer.name,
      participants: [...layer.participant_ids],
      shift_length: String(layer.shift_length),
      shift_unit: layer.shift_unit,
      handoff_time: layer.handoff_time,
      start_date: layer.start_date,
      restrictions: layer.restrictions.map((r) => ({
        days: [...r.days] as Weekday[],
        start: r.start,
        end: endFieldOf(r.end),
      })),
    })),
  };
}

/**
 * A window's end as a time field shows it and as the API takes it. A time field stops at 23:59,
 * so midnight at the end of the day, "24:00" to the API, shows as 00:00; and 00:00 in the field
 * is sent as "24:00": the same instant after any other start (an end before the start ends the
 * next day), and from 00:00 the whole day, which an end equal to its start could not say.
 */
const endFieldOf = (end: string) => (end === '24:00' ? '00:00' : end);
const endOfField = (end: string) => (end === '00:00' ? '24:00' : end);

/** A whole number as a number; anything else as typed (the API's 400 names it). */
const numberOf = (text: string): number | string => {
  const t = text.trim();
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
};

const idOrNull = (text: string) => (text === '' ? null : Number(text));

/** The schedule as POST and PATCH /api/schedules take it (PATCH: layers replace every layer). */
export function scheduleOf(d: ScheduleDraft) {
  return {
    name: d.name,
    time_zone: d.time_zone.trim(),
    team_id: idOrNull(d.team_id),
    fallback_agent_id: idOrNull(d.fallback_agent_id),
    layers: d.layers.map((l) => ({
      ...(l.name.trim() ? { name: l.name.trim() } : {}),
      participant_ids: l.participants,
      shift_length: numberOf(l.shift_length),
      shift_unit: l.shift_unit,
      handoff_time: l.handoff_time,
      start_date: l.start_date,
      restrictions: l.restrictions.map((r) => ({ ...r, end: endOfField(r.end) })),
    })),
  };
}

/** `list` with the item at `from` moved by `by` places (kept within the list). */
export function moved<T>(list: readonly T[], from: number, by: number): T[] {
  const to = Math.min(list.length - 1, Math.max(0, from + by));
  const out = [...list];
  const [item] = out.splice(from, 1);
  if (item !== undefined) out.splice(to, 0, item);
  return out;
}
