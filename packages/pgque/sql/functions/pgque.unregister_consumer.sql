-- unregister_consumer: end a subscription, with the retries it owns. A consumer left
-- with no subscription is deleted, and its dead letters with it.
-- A cooperative member (main.sub) is removed like unsubscribe_subconsumer without batch
-- handling; a main with members is refused.
-- params: queue, consumer name. returns: rows removed (normally 1), 0 if not registered.
-- tables: subscription, consumer, retry_queue, dead_letter (cascade).
create or replace function pgque.unregister_consumer(x_queue_name text, x_consumer_name text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub pgque.subscription;
  removed int;
begin
  select s.* into sub
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = x_queue_name and c.co_name = x_consumer_name
     for update of s;
  if not found then
    return 0;
  end if;

  if sub.sub_role = 'coop_member' then
    if sub.sub_batch is not null then
      raise exception 'cannot unregister active cooperative subconsumer without forced batch handling' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
    perform pgque._remove_member(sub.sub_queue, sub.sub_consumer, sub.sub_id);
    return 1;
  end if;

  if sub.sub_role = 'coop_main' then
    if exists (select 1 from pgque.subscription
                where sub_queue = sub.sub_queue and sub_id = sub.sub_id and sub_role = 'coop_member'
                  and sub_batch is not null) then
      raise exception 'cannot unregister cooperative consumer with active subconsumer batches' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
    if exists (select 1 from pgque.subscription
                where sub_queue = sub.sub_queue and sub_id = sub.sub_id and sub_role = 'coop_member') then
      raise exception 'cannot unregister cooperative main consumer with registered subconsumers' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
  end if;

  delete from pgque.retry_queue where ev_queue = sub.sub_queue and ev_owner = sub.sub_id;
  delete from pgque.coop_window where cw_queue = sub.sub_queue and cw_sub_id = sub.sub_id;
  delete from pgque.subscription where sub_queue = sub.sub_queue and sub_id = sub.sub_id;
  get diagnostics removed = row_count;
  delete from pgque.consumer c
   where c.co_id = sub.sub_consumer
     and not exists (select 1 from pgque.subscription s where s.sub_consumer = c.co_id);
  return removed;
end;
$$;
