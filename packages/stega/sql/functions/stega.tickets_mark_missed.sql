-- tickets_mark_missed: marks the tickets of newly recorded breaches as having missed an SLA,
-- whoever records them (the detector, an import, a test); once per inserting statement.
-- trigger: sla_breaches_mark_missed, after insert on stega.sla_breaches, for each statement,
--   with the new rows as transition table `inserted`.
-- returns: null (an after trigger).
-- tables: updates stega.tickets (sla_missed).
create or replace function stega.tickets_mark_missed() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  update stega.tickets t set sla_missed = true
    from (select distinct ticket_id from inserted) i
   where t.id = i.ticket_id and not t.sla_missed;
  return null;
end;
$$;
