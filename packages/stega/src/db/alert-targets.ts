import type { Queryable } from '@stega/pgque';
import { type AlertChannels, alertChannelsSchema } from '../domain/index.js';

export interface AlertTargets {
  ticketId: number;
  assigneeId: number | null;
  assigneeEmail: string | null;
  channels: AlertChannels;
}

/** The alert channels of a ticket's policy (in-app only when it has none), or null for an unknown ticket. */
export async function alertTargetsLoad(
  db: Queryable,
  ticketId: number,
): Promise<AlertTargets | null> {
  const { rows } = await db.query(
    `select t.id, t.assignee_id, a.email as assignee_email, p.alert_channels
       from stega.tickets t
       left join stega.agents a on a.id = t.assignee_id
       left join stega.sla_policies p on p.id = t.policy_id
      where t.id = $1`,
    [ticketId],
  );
  const row = rows[0];
  if (!row) return null;
  const parsed = alertChannelsSchema.safeParse(row.alert_channels ?? {});
  return {
    ticketId: Number(row.id),
    assigneeId: row.assignee_id === null ? null : Number(row.assignee_id),
    assigneeEmail: (row.assignee_email as string | null) ?? null,
    // a policy edited into an invalid shape still alerts in-app rather than not at all
    channels: parsed.success ? parsed.data : alertChannelsSchema.parse({}),
  };
}

/** Records the in-app alert; once per (alert, agent) whatever the redeliveries. */
export async function inAppAlertInsert(
  db: Queryable,
  alert: {
    type: 'breach' | 'warning';
    id: number;
    ticketId: number;
    agentId: number | null;
    message: string;
  },
): Promise<void> {
  await db.query(
    `insert into stega.alerts (alert_type, alert_id, ticket_id, agent_id, message)
     values ($1, $2, $3, $4, $5)
     on conflict (alert_type, alert_id, agent_id) do nothing`,
    [alert.type, alert.id, alert.ticketId, alert.agentId, alert.message],
  );
}
