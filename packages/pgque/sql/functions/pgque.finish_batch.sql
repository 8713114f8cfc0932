-- finish_batch: close a batch. A normal consumer's cursor moves to the batch's end tick;
-- a cooperative member just goes idle (the group cursor moved when it was allocated).
-- The batch id is a bearer token: a stale or unknown one changes nothing.
-- params: batch id. returns: 1, or 0 with a WARNING when the batch is not open.
-- tables: subscription.
create or replace function pgque.finish_batch(x_batch_id bigint)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub pgque.subscription;
begin
  select * into sub from pgque.subscription where sub_batch = x_batch_id for update;
  if not found then
    raise warning 'finish_batch: batch % not found', x_batch_id;
    return 0;
  end if;
  if sub.sub_role = 'coop_main' then
    raise exception 'cannot finish cooperative main consumer batch % as normal active consumer', x_batch_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
  end if;
  if sub.sub_role = 'coop_member' then
    perform pgque._clear_member_cursor(sub.sub_queue, sub.sub_consumer);
  else
    update pgque.subscription
       set sub_last_tick = sub_next_tick, sub_next_tick = null, sub_batch = null,
           sub_active = pg_catalog.now()
     where sub_queue = sub.sub_queue and sub_consumer = sub.sub_consumer;
  end if;
  return 1;
end;
$$;
