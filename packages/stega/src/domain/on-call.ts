import { minuteOfDay, WEEKDAYS } from './calendar.js';
import type {
  OnCallScheduleDefinition,
  RotationLayer,
  ScheduleOverride,
} from './on-call-schedule.js';
import { instantOfWallClock, type LocalDate } from './zoned-time.js';

/**
 * Who is on call in a schedule: at one instant (`onCallAt`) and as the final shifts over a
 * range (`finalShifts`: layers flattened, restrictions applied, overrides on top, gaps
 * reported). Wall-clock times map to instants through zoned-time.ts (luxon's zone data), so
 * `days`/`weeks` shifts keep their local handoff time across DST changes while `hours`
 * shifts are real hours. The shift holding an instant is found by arithmetic, not by
 * walking from the start date, so a rotation running for years costs the same as a new one.
 * Nothing here reads the system clock.
 */

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The longest range `finalShifts` computes (a little over a year: a calendar feed's). */
export const MAX_SHIFT_RANGE_DAYS = 400;

/** Who is on call at one instant, and why. */
export type OnCall =
  | { agent_id: number; source: 'override'; override_id: number }
  | { agent_id: number; source: 'layer'; layer: number }
  | { agent_id: null; source: 'gap' };

/** One stretch of the final schedule: someone (from an override or a layer) or a gap. */
export interface FinalShift {
  start: Date;
  end: Date;
  agent_id: number | null;
  source: 'override' | 'layer' | 'gap';
  /** The layer (index) the person comes from; null for overrides and gaps. */
  layer: number | null;
  /** The override the person covers; null otherwise. */
  override_id: number | null;
}

interface CompiledWindow {
  weekdays: ReadonlySet<number>;
  start: number;
  end: number;
  /** The window ends on the next day (end at or before start). */
  overnight: boolean;
}

interface CompiledLayer {
  participants: readonly number[];
  unit: RotationLayer['shift_unit'];
  /** Shift length in days (days, weeks) or milliseconds (hours). */
  length: number;
  handoff: number;
  startDate: LocalDate;
  /** The first handoff, an instant. */
  epoch: number;
  windows: readonly CompiledWindow[];
}

/** `date` shifted by whole days (plain calendar arithmetic; luxon's is slower in the hot path). */
function addDays(date: LocalDate, days: number): LocalDate {
  const shifted = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth() + 1,
    day: shifted.getUTCDate(),
  };
}

/** ISO weekday of a date: 1 = Monday .. 7 = Sunday. */
function weekdayOf(date: LocalDate): number {
  return ((new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay() + 6) % 7) + 1;
}

/**
 * Wall-clock instants, memoised: the same (zone, date, minute) always maps to the same
 * instant, and the arithmetic asks for the same handoffs and windows over and over (each
 * computation costs several zone-offset look-ups). Bounded: cleared when full.
 */
const wallInstants = new Map<string, number>();
const WALL_CACHE_SIZE = 100_000;

function wallInstant(zone: string, date: LocalDate, minute: number): number {
  const key = `${zone}|${date.year}-${date.month}-${date.day}|${minute}`;
  let instant = wallInstants.get(key);
  if (instant === undefined) {
    instant = instantOfWallClock(zone, date, minute);
    if (wallInstants.size >= WALL_CACHE_SIZE) wallInstants.clear();
    wallInstants.set(key, instant);
  }
  return instant;
}

/**
 * The local date of `at` in `zone`: the latest of the UTC date's neighbours whose local
 * midnight (its first instant, memoised) is not after `at`. Offsets stay within ±14 h, so
 * the local date is one of the three. (Where clocks go back across midnight, the repeated
 * late hour reads as the new date; callers look a day further back where that matters.)
 */
function localDateOf(zone: string, at: number): LocalDate {
  const utc = new Date(at);
  const day = { year: utc.getUTCFullYear(), month: utc.getUTCMonth() + 1, day: utc.getUTCDate() };
  for (const offset of [1, 0, -1]) {
    const date = addDays(day, offset);
    if (wallInstant(zone, date, 0) <= at) return date;
  }
  return addDays(day, -2);
}

function parseDate(iso: string): LocalDate {
  const [year, month, day] = iso.split('-').map(Number);
  return { year: year ?? 0, month: month ?? 1, day: day ?? 1 };
}

function daysBetween(a: LocalDate, b: LocalDate): number {
  return Math.round(
    (Date.UTC(b.year, b.month - 1, b.day) - Date.UTC(a.year, a.month - 1, a.day)) / DAY,
  );
}

const compiledLayers = new WeakMap<RotationLayer, CompiledLayer>();

function compileLayer(zone: string, layer: RotationLayer): CompiledLayer {
  const cached = compiledLayers.get(layer);
  if (cached) return cached;
  const startDate = parseDate(layer.start_date);
  const handoff = minuteOfDay(layer.handoff_time);
  const compiled: CompiledLayer = {
    participants: layer.participant_ids,
    unit: layer.shift_unit,
    length:
      layer.shift_unit === 'hours'
        ? layer.shift_length * HOUR
        : layer.shift_length * (layer.shift_unit === 'weeks' ? 7 : 1),
    handoff,
    startDate,
    epoch: wallInstant(zone, startDate, handoff),
    windows: layer.restrictions.map((r) => {
      const start = minuteOfDay(r.start);
      const end = minuteOfDay(r.end);
      return {
        weekdays: new Set(r.days.map((day) => WEEKDAYS.indexOf(day) + 1)),
        start,
        end,
        overnight: end <= start,
      };
    }),
  };
  compiledLayers.set(layer, compiled);
  return compiled;
}

/** The instant shift `k` of the layer starts. */
function shiftStart(zone: string, layer: CompiledLayer, k: number): number {
  if (layer.unit === 'hours') return layer.epoch + k * layer.length;
  return wallInstant(zone, addDays(layer.startDate, k * layer.length), layer.handoff);
}

/** The index of the shift holding `at`, or -1 before the rotation's first handoff. */
function shiftIndexAt(zone: string, layer: CompiledLayer, at: number): number {
  if (at < layer.epoch) return -1;
  if (layer.unit === 'hours') return Math.floor((at - layer.epoch) / layer.length);
  let k = Math.floor(daysBetween(layer.startDate, localDateOf(zone, at)) / layer.length);
  while (k > 0 && shiftStart(zone, layer, k) > at) k -= 1;
  while (shiftStart(zone, layer, k + 1) <= at) k += 1;
  return k;
}

/** The windows of the layer that open on local `date`, as instants. */
function windowsOn(zone: string, layer: CompiledLayer, date: LocalDate): [number, number][] {
  const weekday = weekdayOf(date);
  const spans: [number, number][] = [];
  for (const window of layer.windows) {
    if (!window.weekdays.has(weekday)) continue;
    const from = wallInstant(zone, date, window.start);
    const to = wallInstant(zone, window.overnight ? addDays(date, 1) : date, window.end);
    if (to > from) spans.push([from, to]);
  }
  return spans;
}

function insideWindows(zone: string, layer: CompiledLayer, at: number): boolean {
  if (layer.windows.length === 0) return true;
  const date = localDateOf(zone, at);
  for (const day of [addDays(date, -2), addDays(date, -1), date]) {
    for (const [from, to] of windowsOn(zone, layer, day)) {
      if (at >= from && at < to) return true;
    }
  }
  return false;
}

/** The layer's person at `at` (restrictions applied), or null. */
function layerAgentAt(
  zone: string,
  layer: CompiledLayer,
  at: number,
  inactive: ReadonlySet<number> | undefined,
): number | null {
  const k = shiftIndexAt(zone, layer, at);
  if (k < 0 || !insideWindows(zone, layer, at)) return null;
  const agent = layer.participants[k % layer.participants.length];
  if (agent === undefined || inactive?.has(agent)) return null;
  return agent;
}

function overrideAt(
  overrides: readonly ScheduleOverride[],
  at: number,
  inactive: ReadonlySet<number> | undefined,
): ScheduleOverride | null {
  for (let i = overrides.length - 1; i >= 0; i -= 1) {
    const o = overrides[i];
    if (!o || inactive?.has(o.agent_id)) continue;
    if (o.starts_at.getTime() <= at && at < o.ends_at.getTime()) return o;
  }
  return null;
}

function instantOf(value: Date, name: string): number {
  const ms = value instanceof Date ? value.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`${name} must be a valid Date`);
  return ms;
}

function onCallAtInstant(
  schedule: OnCallScheduleDefinition,
  layers: readonly CompiledLayer[],
  at: number,
): OnCall {
  const override = overrideAt(schedule.overrides, at, schedule.inactive);
  if (override)
    return { agent_id: override.agent_id, source: 'override', override_id: override.id };
  for (let i = layers.length - 1; i >= 0; i -= 1) {
    const layer = layers[i];
    if (!layer) continue;
    const agent = layerAgentAt(schedule.time_zone, layer, at, schedule.inactive);
    if (agent !== null) return { agent_id: agent, source: 'layer', layer: i };
  }
  return { agent_id: null, source: 'gap' };
}

/**
 * Who is on call at `at`: the override covering it (the latest where several do), else the
 * highest layer that has someone then (its rotation's shift, inside its restrictions), else
 * nobody (`source: 'gap'`). Deactivated agents (`inactive`) are nobody.
 * @throws TypeError for an invalid Date
 */
export function onCallAt(schedule: OnCallScheduleDefinition, at: Date): OnCall {
  const instant = instantOf(at, 'at');
  const layers = schedule.layers.map((layer) => compileLayer(schedule.time_zone, layer));
  return onCallAtInstant(schedule, layers, instant);
}

/** Every instant in `(from, to)` at which some layer, window or override may change hands. */
function boundaries(
  schedule: OnCallScheduleDefinition,
  layers: readonly CompiledLayer[],
  from: number,
  to: number,
): number[] {
  const zone = schedule.time_zone;
  const points = new Set<number>();
  const add = (instant: number) => {
    if (instant > from && instant < to) points.add(instant);
  };
  const firstDate = addDays(localDateOf(zone, from), -1);
  const dayCount = daysBetween(firstDate, localDateOf(zone, to)) + 1;
  for (const layer of layers) {
    add(layer.epoch);
    for (let k = Math.max(0, shiftIndexAt(zone, layer, from)) + 1; ; k += 1) {
      const start = shiftStart(zone, layer, k);
      if (start >= to) break;
      add(start);
    }
    if (layer.windows.length === 0) continue;
    for (let d = 0; d <= dayCount; d += 1) {
      for (const [open, close] of windowsOn(zone, layer, addDays(firstDate, d))) {
        add(open);
        add(close);
      }
    }
  }
  for (const o of schedule.overrides) {
    add(o.starts_at.getTime());
    add(o.ends_at.getTime());
  }
  return [...points].sort((a, b) => a - b);
}

/**
 * The final schedule over `[from, to)`: consecutive stretches, each someone's (with where
 * they come from) or a gap, adjacent stretches of the same person from the same source
 * merged. Covers the range exactly: the first starts at `from`, the last ends at `to`.
 * @throws RangeError when `to` is not after `from` or the range is longer than
 *   MAX_SHIFT_RANGE_DAYS; TypeError for an invalid Date
 */
export function finalShifts(
  schedule: OnCallScheduleDefinition,
  from: Date,
  to: Date,
): FinalShift[] {
  const start = instantOf(from, 'from');
  const end = instantOf(to, 'to');
  if (end <= start) throw new RangeError('to must be after from');
  if (end - start > MAX_SHIFT_RANGE_DAYS * DAY) {
    throw new RangeError(`a range may span at most ${MAX_SHIFT_RANGE_DAYS} days`);
  }
  const layers = schedule.layers.map((layer) => compileLayer(schedule.time_zone, layer));
  const cuts = [start, ...boundaries(schedule, layers, start, end), end];
  const shifts: FinalShift[] = [];
  for (let i = 0; i + 1 < cuts.length; i += 1) {
    const a = cuts[i] as number;
    const b = cuts[i + 1] as number;
    const who = onCallAtInstant(schedule, layers, a);
    const shift: FinalShift = {
      start: new Date(a),
      end: new Date(b),
      agent_id: who.agent_id,
      source: who.source,
      layer: who.source === 'layer' ? who.layer : null,
      override_id: who.source === 'override' ? who.override_id : null,
    };
    const last = shifts.at(-1);
    if (
      last &&
      last.agent_id === shift.agent_id &&
      last.source === shift.source &&
      last.layer === shift.layer &&
      last.override_id === shift.override_id
    ) {
      last.end = shift.end;
    } else {
      shifts.push(shift);
    }
  }
  return shifts;
}
