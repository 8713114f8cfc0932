import { z } from 'zod';
import { isoDateSchema, minuteOfDay, timeZoneSchema, WEEKDAYS } from './calendar.js';

/**
 * On-call schedules as data: the zod schemas the HTTP layer validates with and the types the
 * arithmetic (on-call.ts) takes. A schedule has a time zone and ordered layers; each layer is
 * a rotation:
 * - `participant_ids`: agents in rotation order (an agent may appear more than once);
 * - `shift_length` + `shift_unit`: `hours` are real elapsed hours from the first handoff
 *   (a 12-hour shift is 12 hours long on the night clocks change, so its handoff moves on
 *   the wall clock); `days` and `weeks` are calendar days on the wall clock of the schedule's
 *   zone (a daily shift handing off at 09:00 hands off at 09:00 local on both sides of a DST
 *   change, and lasts 23 or 25 real hours across it);
 * - `handoff_time` + `start_date`: the first shift starts at that wall-clock time on that
 *   date in the schedule's zone (a handoff time the clocks skip that day starts at the jump);
 * - `restrictions` (optional): the layer only has someone inside these windows, e.g.
 *   weekdays 09:00-17:00. Each is a set of weekdays, a start and an end in the schedule's
 *   zone; an end at or before the start crosses midnight (22:00-06:00 starts on the days
 *   named and ends the next morning); 00:00-24:00 is the whole of each day named.
 */

export const SHIFT_UNITS = ['hours', 'days', 'weeks'] as const;
export type ShiftUnit = (typeof SHIFT_UNITS)[number];

const CLOCK_TIME = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
const END_TIME = /^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$/;

const agentIdSchema = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A window of a layer: on each of `days`, from `start` to `end` (next day when not after). */
export const restrictionSchema = z
  .strictObject({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1, { error: 'name at least one weekday' })
      .max(7)
      .refine((days) => new Set(days).size === days.length, { error: 'names a weekday twice' }),
    start: z.string().regex(CLOCK_TIME, { error: 'must be a time HH:mm between 00:00 and 23:59' }),
    end: z.string().regex(END_TIME, { error: 'must be a time HH:mm between 00:00 and 24:00' }),
  })
  .superRefine((window, ctx) => {
    if (!CLOCK_TIME.test(window.start) || !END_TIME.test(window.end)) return;
    // 00:00-24:00 is the whole of each day named; any other end equal to its start is ambiguous
    // (no time, or a whole turn of the clock)
    if (minuteOfDay(window.end) === minuteOfDay(window.start)) {
      ctx.addIssue({
        code: 'custom',
        path: ['end'],
        message: `must differ from start (${window.start}); for whole days, 00:00 to 24:00`,
      });
    }
  });

export const rotationLayerSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  participant_ids: z
    .array(agentIdSchema)
    .min(1, { error: 'a rotation needs at least one participant' })
    .max(100),
  shift_length: z
    .number()
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(1000, { error: 'must be at most 1000' }),
  shift_unit: z.enum(SHIFT_UNITS),
  handoff_time: z
    .string()
    .regex(CLOCK_TIME, { error: 'must be a time HH:mm between 00:00 and 23:59' }),
  start_date: isoDateSchema,
  restrictions: z.array(restrictionSchema).max(20).default([]),
});

export const scheduleLayersSchema = z
  .array(rotationLayerSchema)
  .min(1, { error: 'a schedule needs at least one layer' })
  .max(10, { error: 'at most 10 layers' });

export const scheduleTimeZoneSchema = timeZoneSchema;

export type Restriction = z.output<typeof restrictionSchema>;
export type RotationLayer = z.output<typeof rotationLayerSchema>;
export type RotationLayerInput = z.input<typeof rotationLayerSchema>;

/** Someone covering the schedule for `[starts_at, ends_at)`. */
export interface ScheduleOverride {
  id: number;
  agent_id: number;
  starts_at: Date;
  ends_at: Date;
}

/** What the arithmetic needs: the zone, the layers (lowest first) and the overrides. */
export interface OnCallScheduleDefinition {
  time_zone: string;
  layers: readonly RotationLayer[];
  /** Later entries win where overrides overlap (order them by creation). */
  overrides: readonly ScheduleOverride[];
  /**
   * Agents who are nobody's target (deactivated): their shifts and overrides count as
   * nobody's, so a lower layer or the gap shows through.
   */
  inactive?: ReadonlySet<number>;
}
