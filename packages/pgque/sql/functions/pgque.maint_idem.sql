-- maint_idem: delete expired idempotency claims (see send_idem), at most 10,000 per call,
-- oldest first, skipping claims a producer is writing. Correctness never waits for it (an
-- expired claim is reclaimed by the next send with its key): it bounds the table's size.
-- maint() runs it for every queue that had an idempotent send (a queue_extra_maint hook).
-- params: queue name, or none for every queue.
-- returns: 1 when it deleted a full 10,000 (call again), else 0.
-- tables: idem. errors: queue not found: <name>.
create or replace function pgque.maint_idem(queue_name text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  deleted int;
begin
  select q.queue_id into qid from pgque.queue q where q.queue_name = maint_idem.queue_name;
  if not found then
    raise exception 'queue not found: %', maint_idem.queue_name
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  delete from pgque.idem i
   using (select e.queue_id, e.idem_key from pgque.idem e
           where e.queue_id = qid and e.expires_at <= pg_catalog.now()
           order by e.expires_at
           limit 10000
             for update skip locked) gone
   where i.queue_id = gone.queue_id and i.idem_key = gone.idem_key;
  get diagnostics deleted = row_count;
  return case when deleted >= 10000 then 1 else 0 end;
end;
$$;

create or replace function pgque.maint_idem()
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  deleted int;
begin
  delete from pgque.idem i
   using (select e.queue_id, e.idem_key from pgque.idem e
           where e.expires_at <= pg_catalog.now()
           order by e.expires_at
           limit 10000
             for update skip locked) gone
   where i.queue_id = gone.queue_id and i.idem_key = gone.idem_key;
  get diagnostics deleted = row_count;
  return case when deleted >= 10000 then 1 else 0 end;
end;
$$;
