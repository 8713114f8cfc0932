-- _settle_parked: hand back one event of a slot's open parked batch (see
-- receive_partitioned): retried after i_retry_after for the slot's subscription only, or
-- dead-lettered when i_retry_after is NULL or the event was already retried max_retries
-- times. Both are idempotent per event, as nack's are; the batch stays open.
-- params: queue id, consumer, slot, the slot's engine consumer name, the parked batch
-- (parking tick, last event id, batch id), the event id, retry delay, reason.
-- returns: 1. tables: partition_backlog (read), retry_queue, dead_letter.
-- errors: PQ004 msg_id not found in batch.
create or replace function pgque._settle_parked(
  i_queue_id int4, i_consumer text, i_slot int4, i_sub_name text,
  i_park_tick bigint, i_through bigint, i_batch bigint,
  i_msg_id bigint, i_retry_after interval, i_reason text)
returns integer
language plpgsql
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  ev pgque.partition_backlog;
  sub record;
begin
  select * into ev from pgque.partition_backlog b
   where b.pb_queue = i_queue_id and b.pb_consumer = i_consumer and b.pb_slot = i_slot
     and b.pb_parked_tick = i_park_tick and b.ev_id <= i_through and b.ev_id = i_msg_id;
  if not found then
    raise exception 'msg_id % not found in batch %', i_msg_id, i_batch
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ004';
  end if;
  select s.sub_id, s.sub_consumer, coalesce(q.queue_max_retries, 5) as max_retries into sub
    from pgque.subscription s
    join pgque.consumer c on c.co_id = s.sub_consumer
    join pgque.queue q on q.queue_id = s.sub_queue
   where s.sub_queue = i_queue_id and c.co_name = i_sub_name;
  if i_retry_after is null or coalesce(ev.ev_retry, 0) >= sub.max_retries then
    insert into pgque.dead_letter (dl_queue_id, dl_consumer_id, dl_reason, ev_id, ev_time, ev_txid, ev_retry,
                                   ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)
    values (i_queue_id, sub.sub_consumer, coalesce(i_reason, case when i_retry_after is null then 'rejected'
                                                                  else 'max retries exceeded' end),
            ev.ev_id, ev.ev_time, ev.ev_txid, ev.ev_retry, ev.ev_type, ev.ev_data,
            ev.ev_extra1, ev.ev_extra2, ev.ev_extra3, ev.ev_extra4)
    on conflict (dl_queue_id, dl_consumer_id, ev_id) do nothing;
  else
    insert into pgque.retry_queue (ev_retry_after, ev_queue, ev_id, ev_time, ev_txid, ev_owner, ev_retry,
                                   ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)
    values (pg_catalog.now() + i_retry_after, i_queue_id, ev.ev_id, ev.ev_time, null, sub.sub_id,
            coalesce(ev.ev_retry, 0) + 1, ev.ev_type, ev.ev_data,
            ev.ev_extra1, ev.ev_extra2, ev.ev_extra3, ev.ev_extra4)
    on conflict (ev_owner, ev_id) do nothing;
  end if;
  return 1;
end;
$$;
