/**
 * Why a ledger row's alert no longer needs it, or null: its ticket was resolved or closed, its
 * breach's escalation was acknowledged, or its SLA cycle's clock stopped (met, or a late
 * reply). One judgement for every statement that asks — the fallback sweep cancelling moot
 * rows (fallbacks-moot.ts), the claim skipping them (claim-due.ts) and a digest leaving them
 * out (digest-gather.ts) — as an SQL expression over the row aliased `row`.
 */
export function mootReason(row: string): string {
  return `coalesce(
            (select 'the ticket was ' || t.status from stega.tickets t
              where t.id = ${row}.ticket_id and t.status in ('resolved', 'closed')),
            (select 'acknowledged by ' || e.acknowledged_by from stega.escalations e
              where e.acknowledged_at is not null
                and e.breach_id = case ${row}.alert_type when 'breach' then ${row}.alert_id
                                    when 'escalation' then (${row}.payload ->> 'breach_id')::bigint end
              limit 1),
            (select case when o.met then 'the SLA target was met' else 'the ticket was answered' end
               from stega.sla_outcomes o
              where o.ticket_id = ${row}.ticket_id and o.kind = ${row}.payload ->> 'kind'
                and (${row}.payload ->> 'detected_at')::timestamptz between o.started_at and o.stopped_at
              limit 1))`;
}
