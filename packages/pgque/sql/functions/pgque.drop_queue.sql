-- drop_queue: remove a queue, its event tables, ticks, retries and dead letters.
-- With x_force it first removes every subscription, cooperative groups included
-- (upstream refuses groups with members), and consumers left with no subscription.
-- params: queue name, force. returns: 1. tables: every table, for this queue; function
-- pgque._write_event (remade without it).
create or replace function pgque.drop_queue(x_queue_name text, x_force bool)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  n int;
  gone_consumers int4[];
begin
  select * into q from pgque.queue where queue_name = x_queue_name for update;
  if not found then
    raise exception 'No such event queue' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if exists (select 1 from pgque.subscription where sub_queue = q.queue_id) then
    if not coalesce(x_force, false) then
      raise exception 'cannot drop queue, consumers still attached' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
    -- two statements: a data-modifying CTE's deletes are invisible to its outer query,
    -- so "no other subscription" must be checked after the delete has happened
    with gone as (
      delete from pgque.subscription where sub_queue = q.queue_id returning sub_consumer
    )
    select pg_catalog.array_agg(sub_consumer) into gone_consumers from gone;
    delete from pgque.consumer c
     where c.co_id = any (gone_consumers)
       and not exists (select 1 from pgque.subscription s where s.sub_consumer = c.co_id);
  end if;
  delete from pgque.retry_queue where ev_queue = q.queue_id;
  delete from pgque.coop_window where cw_queue = q.queue_id;
  delete from pgque.coop_takeover where ct_queue = q.queue_id;
  delete from pgque.dead_letter where dl_queue_id = q.queue_id;
  for n in 0 .. q.queue_ntables - 1 loop
    execute pg_catalog.format('drop table if exists %s', pgque._event_table(q.queue_id, n));
  end loop;
  execute pg_catalog.format('drop table if exists %s', pgque._event_table(q.queue_id));
  delete from pgque.tick where tick_queue = q.queue_id;
  execute pg_catalog.format('drop sequence if exists %s', pgque._queue_sequence(q.queue_id, 'id'));
  execute pg_catalog.format('drop sequence if exists %s', pgque._queue_sequence(q.queue_id, 'tick'));
  delete from pgque.queue where queue_id = q.queue_id;
  perform pgque._create_event_writers();
  return 1;
end;
$$;

create or replace function pgque.drop_queue(x_queue_name text)
returns integer
language sql
strict
as $$
  select pgque.drop_queue(x_queue_name, false);
$$;
