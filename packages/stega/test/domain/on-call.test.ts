import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { finalShifts, onCallAt } from '../../src/domain/on-call.js';
import {
  type OnCallScheduleDefinition,
  type RotationLayerInput,
  rotationLayerSchema,
  type ScheduleOverride,
  scheduleLayersSchema,
} from '../../src/domain/on-call-schedule.js';

const at = (iso: string) => new Date(iso);
const A = 1;
const B = 2;
const C = 3;

function schedule(
  time_zone: string,
  layers: RotationLayerInput[],
  overrides: ScheduleOverride[] = [],
  inactive?: Set<number>,
): OnCallScheduleDefinition {
  return {
    time_zone,
    layers: layers.map((layer) => rotationLayerSchema.parse(layer)),
    overrides,
    ...(inactive ? { inactive } : {}),
  };
}

/** The final shifts over [from, to) as `start..end agent` lines, instants in UTC. */
function lines(s: OnCallScheduleDefinition, from: string, to: string): string[] {
  return finalShifts(s, at(from), at(to)).map(
    (shift) =>
      `${shift.start.toISOString().slice(0, 16)}..${shift.end.toISOString().slice(0, 16)} ${shift.agent_id ?? 'gap'}`,
  );
}

const daily = (zone: string, start_date: string, handoff_time = '09:00') =>
  schedule(zone, [
    { participant_ids: [A, B], shift_length: 1, shift_unit: 'days', handoff_time, start_date },
  ]);

describe('daily shifts keep their local handoff across DST changes', () => {
  it('Europe/Lisbon, spring forward (29 March 2026, 01:00 -> 02:00): a 23-hour day', () => {
    const s = daily('Europe/Lisbon', '2026-03-27');
    // 09:00 WET is 09:00Z; from the 29th, 09:00 WEST is 08:00Z
    expect(lines(s, '2026-03-27T09:00:00Z', '2026-03-30T08:00:00Z')).toEqual([
      '2026-03-27T09:00..2026-03-28T09:00 1',
      '2026-03-28T09:00..2026-03-29T08:00 2',
      '2026-03-29T08:00..2026-03-30T08:00 1',
    ]);
    expect(onCallAt(s, at('2026-03-29T07:59:59.999Z')).agent_id).toBe(B);
    expect(onCallAt(s, at('2026-03-29T08:00:00Z')).agent_id).toBe(A);
  });

  it('Europe/Lisbon, fall back (25 October 2026, 02:00 -> 01:00): a 25-hour day', () => {
    const s = daily('Europe/Lisbon', '2026-10-23');
    expect(lines(s, '2026-10-24T08:00:00Z', '2026-10-26T09:00:00Z')).toEqual([
      '2026-10-24T08:00..2026-10-25T09:00 2',
      '2026-10-25T09:00..2026-10-26T09:00 1',
    ]);
    expect(onCallAt(s, at('2026-10-25T08:59:00Z')).agent_id).toBe(B);
  });

  it('America/New_York, spring forward (8 March 2026): handoff 09:00 EST then 09:00 EDT', () => {
    const s = daily('America/New_York', '2026-03-07');
    expect(lines(s, '2026-03-07T14:00:00Z', '2026-03-09T13:00:00Z')).toEqual([
      '2026-03-07T14:00..2026-03-08T13:00 1',
      '2026-03-08T13:00..2026-03-09T13:00 2',
    ]);
  });

  it('America/New_York, fall back (1 November 2026): handoff 09:00 EDT then 09:00 EST', () => {
    const s = daily('America/New_York', '2026-10-31');
    expect(lines(s, '2026-10-31T13:00:00Z', '2026-11-02T14:00:00Z')).toEqual([
      '2026-10-31T13:00..2026-11-01T14:00 1',
      '2026-11-01T14:00..2026-11-02T14:00 2',
    ]);
  });

  it('a handoff time the clocks skip starts the shift at the jump (02:30 on 8 March, New York)', () => {
    const s = daily('America/New_York', '2026-03-07', '02:30');
    // 02:30 EST on the 7th is 07:30Z; on the 8th 02:00 EST jumps to 03:00 EDT at 07:00Z
    expect(lines(s, '2026-03-07T07:30:00Z', '2026-03-09T06:30:00Z')).toEqual([
      '2026-03-07T07:30..2026-03-08T07:00 1',
      '2026-03-08T07:00..2026-03-09T06:30 2',
    ]);
  });

  it('a repeated handoff time is its first occurrence (01:30 on 1 November, New York)', () => {
    const s = daily('America/New_York', '2026-10-31', '01:30');
    // 01:30 EDT is 05:30Z on the 1st; 01:30 EST on the 2nd is 06:30Z
    expect(lines(s, '2026-10-31T05:30:00Z', '2026-11-02T06:30:00Z')).toEqual([
      '2026-10-31T05:30..2026-11-01T05:30 1',
      '2026-11-01T05:30..2026-11-02T06:30 2',
    ]);
  });

  it('Australia/Sydney, both changes (5 April and 4 October 2026), weekly shifts at 08:00', () => {
    const s = schedule('Australia/Sydney', [
      {
        participant_ids: [A, B, C],
        shift_length: 1,
        shift_unit: 'weeks',
        handoff_time: '08:00',
        start_date: '2026-03-30',
      },
    ]);
    // 08:00 AEDT (UTC+11) is 21:00Z the day before; 08:00 AEST (UTC+10) is 22:00Z
    expect(lines(s, '2026-03-29T21:00:00Z', '2026-04-12T22:00:00Z')).toEqual([
      '2026-03-29T21:00..2026-04-05T22:00 1',
      '2026-04-05T22:00..2026-04-12T22:00 2',
    ]);
    // 2026-10-05 is 27 weeks after 2026-03-30: shift 27, participant 27 mod 3 = 0
    expect(lines(s, '2026-09-27T22:00:00Z', '2026-10-11T21:00:00Z')).toEqual([
      '2026-09-27T22:00..2026-10-04T21:00 3',
      '2026-10-04T21:00..2026-10-11T21:00 1',
    ]);
  });
});

describe('hour shifts are real hours', () => {
  it('12-hour shifts in New York move on the wall clock at spring forward', () => {
    const s = schedule('America/New_York', [
      {
        participant_ids: [A, B],
        shift_length: 12,
        shift_unit: 'hours',
        handoff_time: '08:00',
        start_date: '2026-03-07',
      },
    ]);
    // 08:00 EST = 13:00Z; every 12 real hours; 13:00Z on the 8th reads 09:00 EDT
    expect(lines(s, '2026-03-07T13:00:00Z', '2026-03-08T13:00:00Z')).toEqual([
      '2026-03-07T13:00..2026-03-08T01:00 1',
      '2026-03-08T01:00..2026-03-08T13:00 2',
    ]);
  });

  it('8-hour shifts in Lisbon at fall back: each 8 real hours', () => {
    const s = schedule('Europe/Lisbon', [
      {
        participant_ids: [A, B, C],
        shift_length: 8,
        shift_unit: 'hours',
        handoff_time: '00:00',
        start_date: '2026-10-25',
      },
    ]);
    // midnight WEST on the 25th is 23:00Z on the 24th
    expect(lines(s, '2026-10-24T23:00:00Z', '2026-10-25T23:00:00Z')).toEqual([
      '2026-10-24T23:00..2026-10-25T07:00 1',
      '2026-10-25T07:00..2026-10-25T15:00 2',
      '2026-10-25T15:00..2026-10-25T23:00 3',
    ]);
  });

  it('finds the shift of a rotation started years ago without walking to it', () => {
    const s = schedule('UTC', [
      {
        participant_ids: [A, B, C],
        shift_length: 1,
        shift_unit: 'hours',
        handoff_time: '00:00',
        start_date: '2000-01-01',
      },
    ]);
    const hours = (Date.parse('2026-06-01T05:30:00Z') - Date.parse('2000-01-01T00:00:00Z')) / 3.6e6;
    expect(onCallAt(s, at('2026-06-01T05:30:00Z')).agent_id).toBe([A, B, C][Math.floor(hours) % 3]);
  });
});

describe('restrictions', () => {
  it('weekdays 09:00-17:00 in Lisbon, either side of spring forward', () => {
    const s = schedule('Europe/Lisbon', [
      {
        participant_ids: [A],
        shift_length: 1,
        shift_unit: 'weeks',
        handoff_time: '00:00',
        start_date: '2026-03-02',
        restrictions: [
          {
            days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
            start: '09:00',
            end: '17:00',
          },
        ],
      },
    ]);
    expect(lines(s, '2026-03-27T00:00:00Z', '2026-03-31T00:00:00Z')).toEqual([
      '2026-03-27T00:00..2026-03-27T09:00 gap',
      '2026-03-27T09:00..2026-03-27T17:00 1',
      '2026-03-27T17:00..2026-03-30T08:00 gap',
      '2026-03-30T08:00..2026-03-30T16:00 1',
      '2026-03-30T16:00..2026-03-31T00:00 gap',
    ]);
  });

  it('00:00-24:00 is the whole of each day named: 23 real hours on the day Lisbon springs forward', () => {
    const s = schedule('Europe/Lisbon', [
      {
        participant_ids: [A],
        shift_length: 1,
        shift_unit: 'weeks',
        handoff_time: '00:00',
        start_date: '2026-03-02',
        restrictions: [{ days: ['sunday'], start: '00:00', end: '24:00' }],
      },
    ]);
    // Sunday 29 March: local midnight is 00:00Z (WET), Monday's is 23:00Z (WEST)
    expect(lines(s, '2026-03-28T12:00:00Z', '2026-03-30T12:00:00Z')).toEqual([
      '2026-03-28T12:00..2026-03-29T00:00 gap',
      '2026-03-29T00:00..2026-03-29T23:00 1',
      '2026-03-29T23:00..2026-03-30T12:00 gap',
    ]);
  });

  it('an overnight window 22:00-06:00 across fall back in New York lasts 9 real hours', () => {
    const s = schedule('America/New_York', [
      {
        participant_ids: [B],
        shift_length: 1,
        shift_unit: 'days',
        handoff_time: '00:00',
        start_date: '2026-10-01',
        restrictions: [{ days: ['saturday'], start: '22:00', end: '06:00' }],
      },
    ]);
    // Sat 31 Oct 22:00 EDT = 02:00Z; Sun 06:00 EST = 11:00Z
    expect(lines(s, '2026-11-01T00:00:00Z', '2026-11-01T12:00:00Z')).toEqual([
      '2026-11-01T00:00..2026-11-01T02:00 gap',
      '2026-11-01T02:00..2026-11-01T11:00 2',
      '2026-11-01T11:00..2026-11-01T12:00 gap',
    ]);
  });
});

describe('layers, overrides, gaps', () => {
  const base: RotationLayerInput = {
    participant_ids: [A],
    shift_length: 1,
    shift_unit: 'days',
    handoff_time: '00:00',
    start_date: '2026-01-01',
  };
  const business: RotationLayerInput = {
    participant_ids: [B],
    shift_length: 1,
    shift_unit: 'weeks',
    handoff_time: '00:00',
    start_date: '2026-01-05',
    restrictions: [{ days: ['monday'], start: '09:00', end: '17:00' }],
  };

  it('a later layer overrides an earlier one where it has someone', () => {
    const s = schedule('UTC', [base, business]);
    expect(lines(s, '2026-01-05T00:00:00Z', '2026-01-06T00:00:00Z')).toEqual([
      '2026-01-05T00:00..2026-01-05T09:00 1',
      '2026-01-05T09:00..2026-01-05T17:00 2',
      '2026-01-05T17:00..2026-01-06T00:00 1',
    ]);
    expect(onCallAt(s, at('2026-01-05T10:00:00Z'))).toEqual({
      agent_id: B,
      source: 'layer',
      layer: 1,
    });
  });

  it('overrides win over every layer; the later of two overlapping ones wins', () => {
    const overrides = [
      {
        id: 7,
        agent_id: C,
        starts_at: at('2026-01-05T08:00:00Z'),
        ends_at: at('2026-01-05T12:00:00Z'),
      },
      {
        id: 9,
        agent_id: A,
        starts_at: at('2026-01-05T11:00:00Z'),
        ends_at: at('2026-01-05T13:00:00Z'),
      },
    ];
    const s = schedule('UTC', [base, business], overrides);
    expect(lines(s, '2026-01-05T07:00:00Z', '2026-01-05T18:00:00Z')).toEqual([
      '2026-01-05T07:00..2026-01-05T08:00 1',
      '2026-01-05T08:00..2026-01-05T11:00 3',
      '2026-01-05T11:00..2026-01-05T13:00 1',
      '2026-01-05T13:00..2026-01-05T17:00 2',
      '2026-01-05T17:00..2026-01-05T18:00 1',
    ]);
    expect(onCallAt(s, at('2026-01-05T11:30:00Z'))).toEqual({
      agent_id: A,
      source: 'override',
      override_id: 9,
    });
  });

  it('reports gaps: before the first handoff, outside restrictions, a deactivated person', () => {
    const s = schedule('UTC', [business], [], new Set([B]));
    expect(onCallAt(s, at('2026-01-05T10:00:00Z'))).toEqual({ agent_id: null, source: 'gap' });
    const early = schedule('UTC', [base]);
    expect(lines(early, '2025-12-31T20:00:00Z', '2026-01-01T04:00:00Z')).toEqual([
      '2025-12-31T20:00..2026-01-01T00:00 gap',
      '2026-01-01T00:00..2026-01-01T04:00 1',
    ]);
  });

  it('a deactivated agent’s override falls through to the layers', () => {
    const s = schedule(
      'UTC',
      [base],
      [
        {
          id: 1,
          agent_id: C,
          starts_at: at('2026-02-01T00:00:00Z'),
          ends_at: at('2026-02-02T00:00:00Z'),
        },
      ],
      new Set([C]),
    );
    expect(onCallAt(s, at('2026-02-01T12:00:00Z')).agent_id).toBe(A);
  });

  it('onCallAt agrees with the final shifts at every instant (property)', () => {
    const zones = ['Europe/Lisbon', 'America/New_York', 'Australia/Sydney'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: 1, max: 72 }),
        fc.constantFrom('hours', 'days', 'weeks') as fc.Arbitrary<'hours' | 'days' | 'weeks'>,
        fc.integer({ min: 0, max: 364 * 24 }),
        fc.integer({ min: 0, max: 14 * 24 * 60 }),
        (zone, length, unit, offsetHours, probeMinutes) => {
          const s = schedule(zone, [
            {
              participant_ids: [A, B, C],
              shift_length: unit === 'hours' ? length : Math.ceil(length / 24),
              shift_unit: unit,
              handoff_time: '02:30',
              start_date: '2026-01-01',
            },
            { ...business, participant_ids: [C, A] },
          ]);
          const from = Date.parse('2026-01-01T00:00:00Z') + offsetHours * 3.6e6;
          const to = from + 15 * 86_400_000;
          const shifts = finalShifts(s, new Date(from), new Date(to));
          expect(shifts[0]?.start.getTime()).toBe(from);
          expect(shifts.at(-1)?.end.getTime()).toBe(to);
          const probe = from + probeMinutes * 60_000;
          const holding = shifts.find((x) => x.start.getTime() <= probe && probe < x.end.getTime());
          expect(holding?.agent_id ?? null).toBe(onCallAt(s, new Date(probe)).agent_id);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('validation names the field', () => {
  it('refuses malformed rotations and restrictions', () => {
    const result = scheduleLayersSchema.safeParse([
      {
        participant_ids: [],
        shift_length: 0,
        shift_unit: 'fortnights',
        handoff_time: '25:00',
        start_date: '2026-02-30',
        restrictions: [{ days: ['mon'], start: '09:00', end: '17:00' }],
      },
    ]);
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toEqual([
      '0.handoff_time',
      '0.participant_ids',
      '0.restrictions.0.days.0',
      '0.shift_length',
      '0.shift_unit',
      '0.start_date',
    ]);
    const empty = rotationLayerSchema.safeParse({
      participant_ids: [1],
      shift_length: 1,
      shift_unit: 'days',
      handoff_time: '09:00',
      start_date: '2026-01-01',
      restrictions: [{ days: ['monday'], start: '09:00', end: '09:00' }],
    });
    expect(empty.error?.issues.map((i) => i.path.join('.'))).toEqual(['restrictions.0.end']);
    const midnight = (start: string, end: string) =>
      rotationLayerSchema.safeParse({
        participant_ids: [1],
        shift_length: 1,
        shift_unit: 'days',
        handoff_time: '09:00',
        start_date: '2026-01-01',
        restrictions: [{ days: ['saturday'], start, end }],
      }).success;
    expect(midnight('00:00', '24:00')).toBe(true);
    expect(midnight('00:00', '00:00')).toBe(false);
    expect(midnight('18:00', '24:00')).toBe(true);
  });
});
