-- page_step_advance: the trigger after a person's rule step failed for good (its provider
-- down past its retries, or the address refused): the next step of that person's rules for
-- the same alert, still waiting for its delay, becomes due now instead of at its delay; a
-- step held for the person's quiet hours (held_until) stays held.
-- trigger: alert_deliveries_page_step_advance, after update of status on
--   stega.alert_deliveries, for a row with page_agent_id that became failed_permanent.
-- returns: null (an after-row trigger).
-- tables: updates stega.alert_deliveries.
create or replace function stega.page_step_advance() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  update stega.alert_deliveries d
     set next_attempt_at = pg_catalog.now(), updated_at = pg_catalog.now()
   where d.alert_type = new.alert_type and d.alert_id = new.alert_id
     and d.page_agent_id = new.page_agent_id and d.status = 'scheduled'
     and d.next_attempt_at > pg_catalog.now() and d.held_until is null
     and d.page_step = (select min(n.page_step) from stega.alert_deliveries n
                         where n.alert_type = new.alert_type and n.alert_id = new.alert_id
                           and n.page_agent_id = new.page_agent_id
                           and n.page_step > new.page_step and n.status = 'scheduled');
  return null;
end
$$;
