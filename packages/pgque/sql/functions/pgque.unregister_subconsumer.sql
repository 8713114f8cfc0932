-- unregister_subconsumer: remove member S from group C. A member holding a batch is
-- refused (i_batch_handling 0), or its batch is handed back first (1): every event is
-- retried in 60 s, or dead-lettered when out of retries, and the token is invalidated.
-- The last member leaving turns the main back into a normal consumer. Idempotent.
-- returns: 1 when removed, 0 when there was nothing to remove.
-- tables: subscription, consumer, retry_queue, dead_letter.
create or replace function pgque.unregister_subconsumer(
  i_queue text, i_consumer text, i_subconsumer text, i_batch_handling integer default 0)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  main pgque.subscription;
  member pgque.subscription;
  max_retries int4;
  ev record;
begin
  perform pgque._validate_coop_names(i_queue, i_consumer, i_subconsumer);
  if i_batch_handling is null or i_batch_handling not in (0, 1) then
    raise exception 'unsupported batch_handling value: %', i_batch_handling using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;

  select s.* into main
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = i_queue and c.co_name = i_consumer and s.sub_role = 'coop_main'
     for update of s;
  if not found then
    return 0;
  end if;
  select s.* into member
    from pgque.subscription s
    join pgque.consumer c on c.co_id = s.sub_consumer
   where s.sub_queue = main.sub_queue and c.co_name = i_consumer || '.' || i_subconsumer
     and s.sub_role = 'coop_member' and s.sub_id = main.sub_id
     for update of s;
  if not found then
    return 0;
  end if;

  if member.sub_batch is not null then
    if i_batch_handling = 0 then
      raise exception 'cannot unregister active cooperative subconsumer %/%/% without batch_handling = 1',
        i_queue, i_consumer, i_subconsumer using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
    select coalesce(queue_max_retries, 5) into max_retries from pgque.queue where queue_id = main.sub_queue;
    -- what event_retry(batch, ev, 60) does, for the whole batch in one statement: calling
    -- it per event re-reads the batch each time, quadratic in the batch size
    insert into pgque.retry_queue (ev_retry_after, ev_queue, ev_id, ev_time, ev_txid, ev_owner, ev_retry,
                                   ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)
    select pg_catalog.now() + interval '60 seconds', member.sub_queue, e.ev_id, e.ev_time, null,
           member.sub_id, coalesce(e.ev_retry, 0) + 1, e.ev_type, e.ev_data,
           e.ev_extra1, e.ev_extra2, e.ev_extra3, e.ev_extra4
      from pgque.get_batch_events(member.sub_batch) e
     where coalesce(e.ev_retry, 0) < max_retries
    on conflict (ev_owner, ev_id) do nothing;
    for ev in
      select * from pgque.get_batch_events(member.sub_batch) e where coalesce(e.ev_retry, 0) >= max_retries
    loop
      perform pgque.event_dead(member.sub_batch, ev.ev_id, 'subconsumer unregistered', ev.ev_time,
                               ev.ev_txid::text::xid8, ev.ev_retry, ev.ev_type, ev.ev_data,
                               ev.ev_extra1, ev.ev_extra2, ev.ev_extra3, ev.ev_extra4);
    end loop;
    perform pgque._clear_member_cursor(member.sub_queue, member.sub_consumer);
  end if;

  perform pgque._remove_member(member.sub_queue, member.sub_consumer, member.sub_id);
  return 1;
end;
$$;
