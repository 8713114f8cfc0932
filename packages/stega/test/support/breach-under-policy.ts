import type { Queryable } from '@stega/pgque';
import type { AlertChannelsInput } from '../../src/domain/index.js';
import type { SlaBreachedEvent } from '../../src/events.js';
import { ticketInsertWithClocks } from './fixtures.js';

/** Where the breaches of a worker test happen: its calendar, assignee and "now". */
export interface BreachScene {
  db: Queryable;
  calendarId: number;
  agentId: number;
  /** The breached first-response due instant (and detection time) of every breach. */
  now: Date;
  /** Names the policies: `<label> 1`, `<label> 2`, … */
  label: string;
}

/**
 * Returns a function that makes, for each call, an SLA policy with the given alert
 * channels, a ticket under it assigned to the scene's agent whose first response fell due
 * at `now`, that ticket's breach row, and the `ticket.sla_breached` event the worker would
 * receive for it (not published: the tests hand it to AlertDelivery themselves).
 */
export function breachUnderPolicy(
  scene: BreachScene,
): (channels: AlertChannelsInput) => Promise<SlaBreachedEvent> {
  const { db, calendarId, agentId, now, label } = scene;
  let policies = 0;
  return async (channels) => {
    const policy = await db.query(
      `insert into stega.sla_policies (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id, alert_channels)
       values ($1, 'high', $1, 60, 240, $2, $3) returning id`,
      [`${label} ${++policies}`, calendarId, channels],
    );
    const ticketId = await ticketInsertWithClocks(db, {
      calendarId,
      assigneeId: agentId,
      startedAt: new Date(now.getTime() - 3_600_000),
      firstResponseDue: now,
      resolutionDue: new Date(now.getTime() + 3_600_000),
    });
    await db.query('update stega.tickets set policy_id = $2 where id = $1', [
      ticketId,
      policy.rows[0]?.id,
    ]);
    const breach = await db.query(
      `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at) values ($1, 'first_response', $2, $2) returning id`,
      [ticketId, now],
    );
    return {
      version: 1,
      breach_id: Number(breach.rows[0]?.id),
      ticket_id: ticketId,
      kind: 'first_response',
      due_at: now.toISOString(),
      detected_at: now.toISOString(),
      subject: 'Printer on fire',
      priority: 'high',
      assignee: { id: agentId, name: 'Carla Dias', email: 'carla@example.test' },
      requester: { name: 'Ana', email: 'ana@example.test', org: null },
    };
  };
}
