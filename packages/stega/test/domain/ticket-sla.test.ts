import { describe, expect, it } from 'vitest';
import { TicketTransitionError } from '../../src/domain/errors.js';
import { isBreached } from '../../src/domain/sla-clock.js';
import {
  openTicketSla,
  recordAgentReply,
  recordRequesterReply,
  retargetTicketSla,
  type TicketSla,
  transitionTicketSla,
} from '../../src/domain/ticket-sla.js';
import {
  canTransition,
  isActiveStatus,
  nextStatuses,
  TICKET_STATUSES,
} from '../../src/domain/ticket-status.js';
import { at, iso, NINE_TO_FIVE, weekdays } from './fixtures.js';

// Lisbon in January is UTC+0. Mon 2024-01-15 10:00.
const office = weekdays('Europe/Lisbon', NINE_TO_FIVE);
const targets = { first_response_minutes: 60, resolution_minutes: 480 };

function dues(sla: TicketSla) {
  return {
    status: sla.status,
    first: iso(sla.first_response.due_at),
    resolution: iso(sla.resolution.due_at),
  };
}

describe('ticket status life cycle', () => {
  it('allows the documented moves and nothing else', () => {
    const allowed = TICKET_STATUSES.flatMap((from) =>
      TICKET_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`),
    );
    expect(allowed).toEqual([
      'open->in_progress',
      'open->waiting',
      'open->resolved',
      'in_progress->open',
      'in_progress->waiting',
      'in_progress->resolved',
      'waiting->open',
      'waiting->in_progress',
      'waiting->resolved',
      'resolved->open',
      'resolved->closed',
      'closed->open',
    ]);
    expect(nextStatuses('closed')).toEqual(['open']);
    expect(TICKET_STATUSES.filter(isActiveStatus)).toEqual(['open', 'in_progress']);
  });

  it('throws a TicketTransitionError for a forbidden move', () => {
    const sla = openTicketSla(office, targets, at('2024-01-15T10:00:00Z'));
    expect(() => transitionTicketSla(office, sla, 'closed', at('2024-01-15T11:00:00Z'))).toThrow(
      TicketTransitionError,
    );
    expect(() => transitionTicketSla(office, sla, 'open', at('2024-01-15T11:00:00Z'))).toThrow(
      'a ticket cannot go from open to open',
    );
  });
});

describe('a ticket through its life cycle', () => {
  it('pauses in waiting, stops on reply and resolution, and restarts on reopen', () => {
    let sla = openTicketSla(office, targets, at('2024-01-15T10:00:00Z'));
    expect(dues(sla)).toEqual({
      status: 'open',
      first: '2024-01-15T11:00:00.000Z',
      resolution: '2024-01-16T10:00:00.000Z',
    });

    sla = transitionTicketSla(office, sla, 'in_progress', at('2024-01-15T10:20:00Z'));
    // 30 minutes into both clocks the ticket waits for the customer until 14:00.
    sla = transitionTicketSla(office, sla, 'waiting', at('2024-01-15T10:30:00Z'));
    expect(sla.first_response.paused_since).toEqual(at('2024-01-15T10:30:00Z'));
    expect(isBreached(sla.first_response, at('2024-01-15T13:00:00Z'))).toBe(false);
    sla = transitionTicketSla(office, sla, 'in_progress', at('2024-01-15T14:00:00Z'));
    expect(dues(sla)).toEqual({
      status: 'in_progress',
      first: '2024-01-15T14:30:00.000Z',
      resolution: '2024-01-16T13:30:00.000Z',
    });

    // The agent replies at 14:10: first response met, resolution keeps running.
    sla = recordAgentReply(office, sla, at('2024-01-15T14:10:00Z'));
    expect(sla.first_response.stopped_at).toEqual(at('2024-01-15T14:10:00Z'));
    expect(isBreached(sla.first_response, at('2024-01-20T00:00:00Z'))).toBe(false);
    expect(sla.resolution.stopped_at).toBeNull();

    // Resolved Tue 10:30 with 180 minutes to spare, then closed.
    sla = transitionTicketSla(office, sla, 'resolved', at('2024-01-16T10:30:00Z'));
    expect(sla.resolution.stopped_at).toEqual(at('2024-01-16T10:30:00Z'));
    sla = transitionTicketSla(office, sla, 'closed', at('2024-01-16T11:00:00Z'));
    expect(sla.resolution.stopped_at).toEqual(at('2024-01-16T10:30:00Z'));

    // Reopened Thu 09:00: the 180 minutes left run from there; first response stays stopped.
    sla = transitionTicketSla(office, sla, 'open', at('2024-01-18T09:00:00Z'));
    expect(sla.resolution.stopped_at).toBeNull();
    expect(iso(sla.resolution.due_at)).toBe('2024-01-18T12:00:00.000Z');
    expect(sla.first_response.stopped_at).toEqual(at('2024-01-15T14:10:00Z'));
    expect(isBreached(sla.resolution, at('2024-01-18T12:00:01Z'))).toBe(true);
  });

  it('resolving from waiting stops both clocks, counting the pause', () => {
    let sla = openTicketSla(office, targets, at('2024-01-15T10:00:00Z'));
    sla = transitionTicketSla(office, sla, 'waiting', at('2024-01-15T10:30:00Z'));
    sla = transitionTicketSla(office, sla, 'resolved', at('2024-01-15T16:00:00Z'));
    expect(sla.first_response.stopped_at).toEqual(at('2024-01-15T16:00:00Z'));
    expect(sla.first_response.paused_business_minutes).toBe(330);
    expect(isBreached(sla.first_response, at('2024-01-16T00:00:00Z'))).toBe(false);
    expect(sla.resolution.paused_business_minutes).toBe(330);
  });

  it('retargets running clocks only', () => {
    let sla = openTicketSla(office, targets, at('2024-01-15T10:00:00Z'));
    sla = recordAgentReply(office, sla, at('2024-01-15T10:15:00Z'));
    const urgent = retargetTicketSla(office, sla, {
      first_response_minutes: 15,
      resolution_minutes: 120,
    });
    expect(urgent.first_response).toBe(sla.first_response);
    expect(iso(urgent.resolution.due_at)).toBe('2024-01-15T12:00:00.000Z');
  });
});

describe('next reply', () => {
  const withNext = { ...targets, next_reply_minutes: 30 };

  it('starts at a requester reply after the first response, stops at the next agent reply', () => {
    let sla = openTicketSla(office, withNext, at('2024-01-15T10:00:00Z'));
    // before the first response a requester reply starts nothing: the first response is owed
    sla = recordRequesterReply(office, sla, withNext, at('2024-01-15T10:10:00Z'));
    expect(sla.next_reply).toBeUndefined();
    sla = recordAgentReply(office, sla, at('2024-01-15T10:20:00Z'));
    sla = recordRequesterReply(office, sla, withNext, at('2024-01-15T16:50:00Z'));
    // 10 business minutes today, 20 tomorrow from 09:00
    expect(iso(sla.next_reply!.due_at)).toBe('2024-01-16T09:20:00.000Z');
    // a second requester reply keeps the oldest unanswered one's due time
    const again = recordRequesterReply(office, sla, withNext, at('2024-01-16T09:00:00Z'));
    expect(again.next_reply).toBe(sla.next_reply);
    sla = recordAgentReply(office, sla, at('2024-01-16T09:15:00Z'));
    expect(iso(sla.next_reply!.stopped_at!)).toBe('2024-01-16T09:15:00.000Z');
    expect(isBreached(sla.next_reply!, at('2024-01-16T12:00:00Z'))).toBe(false);
    // the next requester reply starts a new clock
    sla = recordRequesterReply(office, sla, withNext, at('2024-01-16T11:00:00Z'));
    expect(sla.next_reply!.stopped_at).toBeNull();
    expect(iso(sla.next_reply!.due_at)).toBe('2024-01-16T11:30:00.000Z');
    expect(isBreached(sla.next_reply!, at('2024-01-16T11:30:00Z'))).toBe(true);
  });

  it('pauses while waiting on the customer and stops at resolution', () => {
    let sla = openTicketSla(office, withNext, at('2024-01-15T10:00:00Z'));
    sla = recordAgentReply(office, sla, at('2024-01-15T10:05:00Z'));
    sla = recordRequesterReply(office, sla, withNext, at('2024-01-15T11:00:00Z'));
    sla = transitionTicketSla(office, sla, 'waiting', at('2024-01-15T11:10:00Z'));
    expect(sla.next_reply!.paused_since).not.toBeNull();
    expect(isBreached(sla.next_reply!, at('2024-01-15T15:00:00Z'))).toBe(false);
    // two business hours waiting push the due time out by two hours
    sla = transitionTicketSla(office, sla, 'open', at('2024-01-15T13:10:00Z'));
    expect(iso(sla.next_reply!.due_at)).toBe('2024-01-15T13:30:00.000Z');
    sla = transitionTicketSla(office, sla, 'resolved', at('2024-01-15T13:20:00Z'));
    expect(iso(sla.next_reply!.stopped_at!)).toBe('2024-01-15T13:20:00.000Z');
    expect(isBreached(sla.next_reply!, at('2024-01-15T14:00:00Z'))).toBe(false);
    // a resolved ticket's requester reply starts nothing
    expect(recordRequesterReply(office, sla, withNext, at('2024-01-15T14:00:00Z')).next_reply).toBe(
      sla.next_reply,
    );
  });

  it('starts paused when the requester replies while the ticket waits', () => {
    let sla = openTicketSla(office, withNext, at('2024-01-15T10:00:00Z'));
    sla = recordAgentReply(office, sla, at('2024-01-15T10:05:00Z'));
    sla = transitionTicketSla(office, sla, 'waiting', at('2024-01-15T10:06:00Z'));
    sla = recordRequesterReply(office, sla, withNext, at('2024-01-15T11:00:00Z'));
    expect(iso(sla.next_reply!.paused_since!)).toBe('2024-01-15T11:00:00.000Z');
    sla = transitionTicketSla(office, sla, 'in_progress', at('2024-01-15T12:00:00Z'));
    expect(iso(sla.next_reply!.due_at)).toBe('2024-01-15T12:30:00.000Z');
  });

  it('has no clock under a policy without a next-reply target', () => {
    let sla = openTicketSla(office, targets, at('2024-01-15T10:00:00Z'));
    sla = recordAgentReply(office, sla, at('2024-01-15T10:05:00Z'));
    sla = recordRequesterReply(office, sla, targets, at('2024-01-15T11:00:00Z'));
    expect(sla.next_reply).toBeUndefined();
  });
});
