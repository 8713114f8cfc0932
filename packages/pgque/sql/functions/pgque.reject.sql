-- reject: dead-letter one message of a batch at once, without retries (an extension beyond
-- PgQue 0.2, for events that can never succeed, such as a payload that fails validation).
-- Like nack it re-reads the event from the batch, leaves the batch open, and is
-- idempotent per (queue, consumer, event).
-- returns: 1. errors: batch not found: <id>; msg_id <id> not found in batch <id>.
create or replace function pgque.reject(i_batch_id bigint, i_msg pgque.message, i_reason text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  ev record;
begin
  perform 1 from pgque._batch_subscription(i_batch_id);
  select * into ev from pgque.get_batch_events(i_batch_id) e where e.ev_id = (i_msg).msg_id;
  if not found then
    raise exception 'msg_id % not found in batch %', (i_msg).msg_id, i_batch_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ004';
  end if;
  return pgque.event_dead(i_batch_id, ev.ev_id, coalesce(i_reason, 'rejected'), ev.ev_time,
                          ev.ev_txid::text::xid8, ev.ev_retry, ev.ev_type, ev.ev_data,
                          ev.ev_extra1, ev.ev_extra2, ev.ev_extra3, ev.ev_extra4);
end;
$$;
