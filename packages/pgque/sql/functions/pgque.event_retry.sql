-- event_retry: schedule one event of a batch for redelivery to this subscription (or
-- cooperative group) only, with ev_retry incremented. The batch stays open.
-- params: batch id, event id, and when: a time or a number of seconds from now.
-- returns: 1, or 0 when the event is already scheduled. tables: retry_queue.
create or replace function pgque.event_retry(x_batch_id bigint, x_event_id bigint, x_retry_time timestamptz)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  owner record;
  ev record;
  inserted int;
begin
  select * into owner from pgque._batch_subscription(x_batch_id);
  select * into ev from pgque.get_batch_events(x_batch_id) e where e.ev_id = x_event_id;
  if not found then
    raise exception 'event not found' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ004';
  end if;
  insert into pgque.retry_queue (ev_retry_after, ev_queue, ev_id, ev_time, ev_txid, ev_owner, ev_retry,
                                 ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)
  values (x_retry_time, owner.sub_queue, ev.ev_id, ev.ev_time, null, owner.sub_id,
          coalesce(ev.ev_retry, 0) + 1, ev.ev_type, ev.ev_data,
          ev.ev_extra1, ev.ev_extra2, ev.ev_extra3, ev.ev_extra4)
  on conflict (ev_owner, ev_id) do nothing;
  get diagnostics inserted = row_count;
  return inserted;
end;
$$;

create or replace function pgque.event_retry(x_batch_id bigint, x_event_id bigint, x_retry_seconds integer)
returns integer
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.event_retry(x_batch_id, x_event_id,
                           pg_catalog.now() + pg_catalog.make_interval(secs => x_retry_seconds));
$$;
