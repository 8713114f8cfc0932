import type { Queryable } from '@stega/pgque';
import { z } from 'zod';

/** Where a policy sends its SLA alerts. Stored as stega.sla_policies.alert_channels. */
export const alertChannelsSchema = z.strictObject({
  /** An in-app alert for the assignee (or for the whole team when unassigned). */
  in_app: z.boolean().default(true),
  /** Email addresses that receive every alert of the policy. */
  email: z.array(z.email()).default([]),
  /** Also email the ticket's assignee. */
  email_assignee: z.boolean().default(false),
  /** Webhooks: a JSON POST per alert, signed with `secret` (HMAC-SHA256) when given. */
  webhooks: z
    .array(
      z.strictObject({
        url: z.url({ protocol: /^https?$/ }),
        secret: z.string().min(1).optional(),
      }),
    )
    .default([]),
});
export type AlertChannels = z.output<typeof alertChannelsSchema>;

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
