-- nack: hand one message of a batch back. It is retried after i_retry_after (whole
-- seconds) for this subscription only, or dead-lettered once it has been retried
-- max_retries times (default 5). The batch stays open: ack it afterwards.
-- Only msg_id of i_msg is used; the event is re-read from the batch.
-- returns: 1. errors: batch not found: <id>; msg_id <id> not found in batch <id>.
create or replace function pgque.nack(
  i_batch_id bigint, i_msg pgque.message,
  i_retry_after interval default '60 seconds', i_reason text default null)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  owner record;
  ev record;
begin
  select * into owner from pgque._batch_subscription(i_batch_id);
  select * into ev from pgque.get_batch_events(i_batch_id) e where e.ev_id = (i_msg).msg_id;
  if not found then
    raise exception 'msg_id % not found in batch %', (i_msg).msg_id, i_batch_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ004';
  end if;
  if coalesce(ev.ev_retry, 0) >= owner.max_retries then
    perform pgque.event_dead(i_batch_id, ev.ev_id, coalesce(i_reason, 'max retries exceeded'),
                             ev.ev_time, ev.ev_txid::text::xid8, ev.ev_retry, ev.ev_type, ev.ev_data,
                             ev.ev_extra1, ev.ev_extra2, ev.ev_extra3, ev.ev_extra4);
  else
    perform pgque.event_retry(i_batch_id, ev.ev_id,
                              extract(epoch from coalesce(i_retry_after, '0'::interval))::integer);
  end if;
  return 1;
end;
$$;
