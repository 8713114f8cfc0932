-- ticket_pagerduty_resolve: a resolved (or closed) ticket cancels every waiting fallback of
-- it, then resolves all its PagerDuty alerts.
-- trigger: tickets_pagerduty_resolve, after update of status on stega.tickets, for each row
--   whose status became resolved or closed.
-- returns: null (an after trigger).
-- tables: through fallbacks_cancel and pagerduty_resolves_record, stega.alert_deliveries.
create or replace function stega.ticket_pagerduty_resolve() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  perform stega.fallbacks_cancel(new.id, null, null, null, null, 'the ticket was ' || new.status);
  perform stega.pagerduty_resolves_record(new.id, null, null, null, 'the ticket was ' || new.status);
  return null;
end;
$$;
