-- remove_partition_worker: `worker` leaves partitioned consumer `consumer` (see
-- touch_partition_worker), so the others take its share at once instead of after its TTL.
-- Its slots are released separately (release_slot).
-- params: queue_name, consumer, worker. returns: 1 when it was listed, else 0.
-- tables: partition_worker.
create or replace function pgque.remove_partition_worker(queue_name text, consumer text, worker text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  removed int;
begin
  delete from pgque.partition_worker w
   using pgque.queue q
   where q.queue_name = remove_partition_worker.queue_name and w.pw_queue = q.queue_id
     and w.pw_consumer = remove_partition_worker.consumer and w.pw_worker = remove_partition_worker.worker;
  get diagnostics removed = row_count;
  return removed;
end;
$$;
