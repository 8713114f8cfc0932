-- A recorded breach marks its ticket (000008), now once per inserting statement instead of
-- once per row: a detector run records up to 1,000 breaches in one insert, and a row
-- trigger per breach (a function call and an update statement each) cost more than the
-- insert itself. The marking is the same: every ticket with a newly recorded breach.
create function stega.tickets_mark_missed() returns trigger
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

drop trigger sla_breaches_mark_missed on stega.sla_breaches;
create trigger sla_breaches_mark_missed
  after insert on stega.sla_breaches
  referencing new table as inserted
  for each statement execute function stega.tickets_mark_missed();
drop function stega.ticket_mark_missed();
