-- register_consumer_at: subscribe a consumer to a queue at a tick (NULL: the newest),
-- or reposition an existing subscription there (its open batch is dropped).
-- The consumer sees events committed after that tick.
-- params: queue, consumer name, tick. returns: 1 when newly registered, else 0.
-- tables: consumer, subscription, tick.
create or replace function pgque.register_consumer_at(x_queue_name text, x_consumer_name text, x_tick_pos bigint)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  cid int4;
  pos bigint;
  existing pgque.subscription;
begin
  if x_consumer_name is null or x_consumer_name = '' then
    raise exception 'consumer name must not be empty' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select queue_id into qid from pgque.queue where queue_name = x_queue_name;
  if not found then
    raise exception 'Event queue not created yet' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if x_tick_pos is not null then
    perform 1 from pgque.tick where tick_queue = qid and tick_id = x_tick_pos;
    if not found then
      raise exception 'cannot reposition, tick not found: %', x_tick_pos using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
    end if;
  end if;
  cid := pgque._consumer_id(x_consumer_name);

  select * into existing from pgque.subscription
   where sub_queue = qid and sub_consumer = cid for update;
  if found then
    if x_tick_pos is not null then
      update pgque.subscription
         set sub_last_tick = x_tick_pos, sub_batch = null, sub_next_tick = null, sub_active = pg_catalog.now()
       where sub_queue = qid and sub_consumer = cid;
    end if;
    return 0;
  end if;

  pos := coalesce(x_tick_pos,
                  (select max(tick_id) from pgque.tick where tick_queue = qid));
  if pos is null then
    raise exception 'No ticks for this queue.  Please run ticker on database.' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
  end if;
  insert into pgque.subscription (sub_queue, sub_consumer, sub_last_tick)
  values (qid, cid, pos)
  on conflict (sub_queue, sub_consumer) do nothing;
  return case when found then 1 else 0 end;
end;
$$;
