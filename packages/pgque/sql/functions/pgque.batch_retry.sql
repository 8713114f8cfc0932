-- batch_retry: schedule every event of a batch for redelivery, skipping those already
-- scheduled. params: batch id, delay in seconds. returns: rows scheduled.
create or replace function pgque.batch_retry(i_batch_id bigint, i_retry_seconds integer)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  owner record;
  inserted int;
begin
  select s.sub_id, s.sub_queue into owner from pgque.subscription s where s.sub_batch = i_batch_id;
  if not found then
    raise exception 'batch_retry: batch % not found', i_batch_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ003';
  end if;
  insert into pgque.retry_queue (ev_retry_after, ev_queue, ev_id, ev_time, ev_txid, ev_owner, ev_retry,
                                 ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)
  select pg_catalog.now() + pg_catalog.make_interval(secs => i_retry_seconds), owner.sub_queue,
         e.ev_id, e.ev_time, null, owner.sub_id, coalesce(e.ev_retry, 0) + 1, e.ev_type, e.ev_data,
         e.ev_extra1, e.ev_extra2, e.ev_extra3, e.ev_extra4
    from pgque.get_batch_events(i_batch_id) e
  on conflict (ev_owner, ev_id) do nothing;
  get diagnostics inserted = row_count;
  return inserted;
end;
$$;
