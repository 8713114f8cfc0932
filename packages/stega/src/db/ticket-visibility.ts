/**
 * Who may see a ticket: THE predicate every ticket read applies (list, search, detail,
 * comments, transitions, acknowledgements, inbox, breaches, SLA achievement). Kept here
 * once, as SQL, so no read can spell it differently.
 *
 * A viewer is an agent's id: they see the tickets of their teams, those assigned to them and
 * those of no team. EVERY_TICKET (null) sees all: admins, supervisors, integration tokens,
 * and every agent under TICKET_VISIBILITY=all (services/visibility.ts decides which).
 */
export type TicketViewer = number | null;

/** The viewer of reads made by Stega itself, and of principals who see every ticket. */
export const EVERY_TICKET: TicketViewer = null;

/**
 * The predicate over the ticket row `alias`, for the viewer bound as the bigint parameter
 * `param` (e.g. `$3`). Served by tickets_team_idx / tickets_assignee_idx and
 * team_members_agent_idx; the membership subquery is one index probe per statement.
 */
export function ticketVisible(alias: string, param: string): string {
  return `(${param}::bigint is null
    or ${alias}.team_id is null
    or ${alias}.assignee_id = ${param}::bigint
    or ${alias}.team_id = any (array(
         select m.team_id from stega.team_members m where m.agent_id = ${param}::bigint)))`;
}
