import type { CalendarRow } from '../db/calendars.js';
import type { ClockRow } from '../db/clocks.js';
import type { PolicyRow } from '../db/policies.js';
import {
  type BusinessCalendar,
  calendarFromRow,
  isBreached,
  type SlaClock,
  slaClockState,
  slaWarningAt,
  type TicketSla,
  type TicketStatus,
} from '../domain/index.js';

/**
 * The bridge between the SLA domain's plain values and the stored rows: calendars, clocks
 * (with `warn_at` derived from the configured warning share) and the API's view of a clock.
 */

/** The domain calendar of a stored one (validated: corrupt data fails loudly). */
export function calendarOfRow(row: CalendarRow): BusinessCalendar {
  return calendarFromRow(row);
}

function domainClockOf(row: ClockRow): SlaClock {
  return {
    kind: row.kind,
    started_at: row.started_at,
    target_minutes: row.target_minutes,
    paused_business_minutes: row.paused_business_minutes,
    paused_since: row.paused_since,
    stopped_at: row.stopped_at,
    due_at: row.due_at,
  };
}

/** The ticket's SLA as the domain sees it; undefined when the ticket has no clocks. */
export function ticketSlaOf(status: TicketStatus, rows: ClockRow[]): TicketSla | undefined {
  const first = rows.find((row) => row.kind === 'first_response');
  const resolution = rows.find((row) => row.kind === 'resolution');
  const nextReply = rows.find((row) => row.kind === 'next_reply');
  if (!first || !resolution) return undefined;
  return {
    status,
    first_response: domainClockOf(first),
    resolution: domainClockOf(resolution),
    ...(nextReply ? { next_reply: domainClockOf(nextReply) } : {}),
  };
}

/**
 * The rows to store for a ticket's SLA; the warning instants are recomputed with every
 * change, one per share of `warningShares` (ascending, each in (0, 1]; a share of 1 is the
 * due time: no warning). `warn_at` is the first of them, or `due_at` when there is none.
 */
export function clockRowsOf(
  ticketId: number,
  calendarId: number,
  calendar: BusinessCalendar,
  sla: TicketSla,
  warningShares: readonly number[],
): ClockRow[] {
  const shares = [...new Set(warningShares)].sort((a, b) => a - b);
  const clocks = [sla.first_response, sla.resolution, ...(sla.next_reply ? [sla.next_reply] : [])];
  return clocks.map((clock) => {
    const instants = shares.map((share) => slaWarningAt(calendar, clock, share));
    return {
      ticket_id: ticketId,
      calendar_id: calendarId,
      kind: clock.kind,
      started_at: clock.started_at,
      target_minutes: clock.target_minutes,
      paused_business_minutes: clock.paused_business_minutes,
      paused_since: clock.paused_since,
      stopped_at: clock.stopped_at,
      due_at: clock.due_at,
      warn_at: instants[0] ?? clock.due_at,
      warning_shares: shares,
      warning_instants: instants,
    };
  });
}

/**
 * The warning shares a policy gives its clocks: its own thresholds, else the global default
 * share (SLA_WARNING_SHARE).
 */
export function warningSharesOf(
  policy: { warning_thresholds?: number[] | null } | undefined,
  defaultShare: number,
): number[] {
  return policy?.warning_thresholds ?? [defaultShare];
}

/** The targets a policy sets. */
export function targetsOf(policy: PolicyRow) {
  return {
    first_response_minutes: policy.first_response_minutes,
    resolution_minutes: policy.resolution_minutes,
    next_reply_minutes: policy.next_reply_minutes,
  };
}

/** A clock as the API shows it, with its state and whether it missed its target at `now`. */
export function clockView(row: ClockRow, now: Date) {
  const clock = domainClockOf(row);
  return {
    kind: row.kind,
    state: slaClockState(clock),
    calendar_id: row.calendar_id,
    started_at: row.started_at,
    target_minutes: row.target_minutes,
    paused_business_minutes: Math.round(row.paused_business_minutes * 1000) / 1000,
    paused_since: row.paused_since,
    stopped_at: row.stopped_at,
    due_at: row.due_at,
    warn_at: row.warn_at,
    // each pre-breach warning: its share of the target and its instant (provisional while paused)
    warnings:
      row.warning_shares === null
        ? row.warn_at < row.due_at
          ? [{ threshold: null, at: row.warn_at }]
          : []
        : row.warning_shares
            .map((threshold, i) => ({
              threshold,
              at: row.warning_instants?.[i] ?? row.due_at,
            }))
            .filter((warning) => warning.threshold < 1),
    breached: isBreached(clock, now),
  };
}

export type ClockView = ReturnType<typeof clockView>;

/** What changed between two versions of a ticket's SLA, one activity entry per clock change. */
export function clockChanges(before: TicketSla | undefined, after: TicketSla | undefined) {
  const entries: { action: string; details: Record<string, unknown> }[] = [];
  if (!after) return entries;
  for (const kind of ['first_response', 'resolution', 'next_reply'] as const) {
    const a = after[kind];
    const b = before?.[kind];
    if (!a) continue;
    // a next-reply clock starts anew for each requester reply: a new start is a new clock
    const change =
      !b || b.started_at.getTime() !== a.started_at.getTime()
        ? 'started'
        : !b.stopped_at && a.stopped_at
          ? 'stopped'
          : b.stopped_at && !a.stopped_at
            ? 'restarted'
            : !b.paused_since && a.paused_since
              ? 'paused'
              : b.paused_since && !a.paused_since
                ? 'resumed'
                : b.target_minutes !== a.target_minutes
                  ? 'retargeted'
                  : b.due_at.getTime() !== a.due_at.getTime()
                    ? 'rescheduled'
                    : null;
    if (!change) continue;
    entries.push({
      action: `sla_clock_${change}`,
      details: {
        kind,
        due_at: a.due_at.toISOString(),
        ...(b &&
        b.started_at.getTime() === a.started_at.getTime() &&
        b.due_at.getTime() !== a.due_at.getTime()
          ? { previous_due_at: b.due_at.toISOString() }
          : {}),
        ...(change === 'retargeted' ? { target_minutes: a.target_minutes } : {}),
        ...(change === 'stopped' ? { missed: a.stopped_at && a.stopped_at > a.due_at } : {}),
      },
    });
  }
  return entries;
}
