-- sla_outcome_pagerduty_resolve: a stopped SLA clock (met, a late reply, the ticket
-- resolved) cancels its cycle's waiting fallbacks, then resolves the PagerDuty alerts of
-- that cycle (none for a fallback page cancelled here: it never went out).
-- trigger: sla_outcomes_pagerduty_resolve, after insert or update on stega.sla_outcomes,
--   for each row.
-- returns: null (an after trigger).
-- tables: reads stega.sla_clocks; through fallbacks_cancel and pagerduty_resolves_record,
--   stega.alert_deliveries.
create or replace function stega.sla_outcome_pagerduty_resolve() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  perform stega.fallbacks_cancel(
    new.ticket_id, null, new.kind, new.started_at, new.stopped_at,
    -- resolving stores the stopped clocks before their outcomes: with the resolution clock
    -- stopped, the ticket is resolved (or closed)
    case when new.kind = 'resolution'
           or exists (select 1 from stega.sla_clocks r
                       where r.ticket_id = new.ticket_id and r.kind = 'resolution'
                         and r.stopped_at is not null) then 'the ticket was resolved'
         when new.met then 'the SLA target was met'
         else 'the ticket was answered' end);
  perform stega.pagerduty_resolves_record(
    new.ticket_id, new.kind, new.started_at, new.stopped_at,
    case when new.met then 'the SLA target was met' else 'the SLA clock stopped (late)' end);
  return null;
end;
$$;
