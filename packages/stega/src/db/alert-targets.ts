import type { Queryable } from '@stega/pgque';
import { type AlertChannels, alertChannelsSchema } from '../domain/index.js';

export interface AlertTargets {
  ticketId: number;
  assigneeId: number | null;
  assigneeEmail: string | null;
  /** The ticket's team, null when it has none. */
  teamId: number | null;
  /** The members of the ticket's team, by id (empty without a team). */
  teamMemberIds: number[];
  /** The email of the ticket's team lead (null without a team or a lead). */
  teamLeadEmail: string | null;
  channels: AlertChannels;
}

/** One in-app recipient: the ledger's recipient key and the agent the alert row is for. */
export interface InAppRecipient {
  recipient: string;
  agentId: number | null;
}

/**
 * Who gets a ticket's in-app alert: its assignee; an unassigned ticket's team members, each
 * (`agent:<id>`); an unassigned ticket of no team (or of a team without members), the shared
 * `team` inbox (no agent), as before teams existed.
 */
export function inAppRecipientsOf(targets: AlertTargets): InAppRecipient[] {
  if (targets.assigneeId !== null) {
    return [{ recipient: `agent:${targets.assigneeId}`, agentId: targets.assigneeId }];
  }
  if (targets.teamMemberIds.length > 0) {
    return targets.teamMemberIds.map((id) => ({ recipient: `agent:${id}`, agentId: id }));
  }
  return [{ recipient: 'team', agentId: null }];
}

/** The alert channels of a ticket's policy (in-app only when it has none), or null for an unknown ticket. */
export async function alertTargetsLoad(
  db: Queryable,
  ticketId: number,
): Promise<AlertTargets | null> {
  return (await alertTargetsLoadMany(db, [ticketId])).get(ticketId) ?? null;
}

/** The alert targets of several tickets in one query; unknown tickets are absent. */
export async function alertTargetsLoadMany(
  db: Queryable,
  ticketIds: number[],
): Promise<Map<number, AlertTargets>> {
  const { rows } = await db.query(
    `select t.id, a.id as assignee_id, a.email as assignee_email, p.alert_channels, t.team_id,
            array(select m.agent_id from stega.team_members m
                    join stega.agents ma on ma.id = m.agent_id and ma.deactivated_at is null
                   where m.team_id = t.team_id order by m.agent_id) as team_member_ids,
            (select l.email from stega.team_members m
               join stega.agents l on l.id = m.agent_id and l.deactivated_at is null
              where m.team_id = t.team_id and m.is_lead) as team_lead_email
       from stega.tickets t
       -- a deactivated agent (someone who left) is alerted by no channel: a ticket still
       -- assigned to one alerts as an unassigned one does (its team)
       left join stega.agents a on a.id = t.assignee_id and a.deactivated_at is null
       left join stega.sla_policies p on p.id = t.policy_id
      where t.id = any ($1::bigint[])`,
    [ticketIds],
  );
  const targets = new Map<number, AlertTargets>();
  for (const row of rows) {
    const parsed = alertChannelsSchema.safeParse(row.alert_channels ?? {});
    targets.set(Number(row.id), {
      ticketId: Number(row.id),
      assigneeId: row.assignee_id === null ? null : Number(row.assignee_id),
      assigneeEmail: (row.assignee_email as string | null) ?? null,
      teamId: row.team_id == null ? null : Number(row.team_id),
      teamMemberIds: ((row.team_member_ids as unknown[] | null) ?? []).map(Number),
      teamLeadEmail: (row.team_lead_email as string | null) ?? null,
      // a policy edited into an invalid shape still alerts in-app rather than not at all
      channels: parsed.success ? parsed.data : alertChannelsSchema.parse({}),
    });
  }
  return targets;
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
