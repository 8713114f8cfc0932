import ical, { ICalCalendarMethod, ICalEventTransparency } from 'ical-generator';

/** One on-call shift as a calendar event (instants in UTC). */
export interface IcsEvent {
  uid: string;
  start: Date;
  end: Date;
  summary: string;
  description?: string;
}

/**
 * The on-call feed's iCalendar text (RFC 5545, written by `ical-generator`): a published
 * calendar named `name` whose events are free time (TRANSP:TRANSPARENT: a shift does not
 * make its person busy), each stamped `now` (DTSTAMP).
 */
export function icsCalendar(name: string, events: IcsEvent[], now: Date): string {
  const calendar = ical({
    name,
    prodId: { company: 'Stega', product: 'On-call schedules', language: 'EN' },
    method: ICalCalendarMethod.PUBLISH,
  });
  for (const event of events) {
    calendar.createEvent({
      id: event.uid,
      stamp: now,
      start: event.start,
      end: event.end,
      summary: event.summary,
      description: event.description ?? null,
      transparency: ICalEventTransparency.TRANSPARENT,
    });
  }
  return calendar.toString();
}
