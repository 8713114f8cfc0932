-- touch_partition_worker: announce (or renew) `worker` as live in partitioned consumer
-- `consumer` for `ttl`, and answer every live worker (an extension beyond PgQue 0.3: the
-- TypeScript PartitionedConsumer spreads the slots over the workers this returns). Rows
-- expired for over an hour are deleted on the way.
-- params: queue_name, consumer, worker, ttl (default 30 s, at least 1 s).
-- returns: the live workers' names, sorted. tables: partition_worker.
-- errors: PQ014 partitioned consumer not found; PQ010 empty worker, bad ttl; PQ001 queue
-- not found.
create or replace function pgque.touch_partition_worker(
  queue_name text, consumer text, worker text, ttl interval default '30 seconds')
returns setof text
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  pc record;
begin
  if touch_partition_worker.worker is null or touch_partition_worker.worker = '' then
    raise exception 'worker must not be empty'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if touch_partition_worker.ttl is null or touch_partition_worker.ttl < interval '1 second'
     or not pg_catalog.isfinite(touch_partition_worker.ttl) then
    raise exception 'ttl must be a finite interval of at least 1 second, got %',
      coalesce(touch_partition_worker.ttl::text, 'NULL')
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select * into pc from pgque._partition_lookup(touch_partition_worker.queue_name,
                                                touch_partition_worker.consumer, 0, null);
  insert into pgque.partition_worker as w (pw_queue, pw_consumer, pw_worker, pw_seen_until)
  values (pc.queue_id, touch_partition_worker.consumer, touch_partition_worker.worker,
          pg_catalog.now() + touch_partition_worker.ttl)
  on conflict (pw_queue, pw_consumer, pw_worker) do update set pw_seen_until = excluded.pw_seen_until;
  delete from pgque.partition_worker w
   where w.pw_queue = pc.queue_id and w.pw_consumer = touch_partition_worker.consumer
     and w.pw_seen_until < pg_catalog.now() - interval '1 hour';
  return query
    select w.pw_worker from pgque.partition_worker w
     where w.pw_queue = pc.queue_id and w.pw_consumer = touch_partition_worker.consumer
       and w.pw_seen_until >= pg_catalog.now()
     order by w.pw_worker collate "C";
end;
$$;
