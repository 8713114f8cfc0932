-- get_queue_info: configuration and live figures of one queue (NULL or no argument:
-- all queues). Security definer, so a pure reader can call it (upstream 0.2 cannot).
-- ticker_lag: age of the newest tick; ev_per_sec: rate over the last ~20 ticks;
-- ev_new: events not yet in a tick (an estimate).
create or replace function pgque.get_queue_info(
  i_queue_name text,
  out queue_name text, out queue_ntables integer, out queue_cur_table integer,
  out queue_rotation_period interval, out queue_switch_time timestamptz,
  out queue_external_ticker boolean, out queue_ticker_paused boolean,
  out queue_ticker_max_count integer, out queue_ticker_max_lag interval,
  out queue_ticker_idle_period interval, out ticker_lag interval,
  out ev_per_sec float8, out ev_new bigint, out last_tick_id bigint)
returns setof record
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  newest pgque.tick;
  older pgque.tick;
begin
  for q in
    select * from pgque.queue qq
     where i_queue_name is null or qq.queue_name = i_queue_name
     order by qq.queue_name
  loop
    select * into newest from pgque.tick t where t.tick_queue = q.queue_id order by t.tick_id desc limit 1;
    select * into older from pgque.tick t
     where t.tick_queue = q.queue_id and t.tick_id >= newest.tick_id - 20
     order by t.tick_id limit 1;
    queue_name := q.queue_name;
    queue_ntables := q.queue_ntables;
    queue_cur_table := q.queue_cur_table;
    queue_rotation_period := q.queue_rotation_period;
    queue_switch_time := q.queue_switch_time;
    queue_external_ticker := q.queue_external_ticker;
    queue_ticker_paused := q.queue_ticker_paused;
    queue_ticker_max_count := q.queue_ticker_max_count;
    queue_ticker_max_lag := q.queue_ticker_max_lag;
    queue_ticker_idle_period := q.queue_ticker_idle_period;
    ticker_lag := pg_catalog.now() - newest.tick_time;
    ev_per_sec := case
      when newest.tick_time > older.tick_time
      then (newest.tick_event_seq - older.tick_event_seq)::float8
           / extract(epoch from newest.tick_time - older.tick_time)::float8
    end;
    ev_new := pgque.seq_getval(pgque._queue_sequence(q.queue_id, 'id')) - newest.tick_event_seq;
    last_tick_id := newest.tick_id;
    return next;
  end loop;
end;
$$;

create or replace function pgque.get_queue_info(
  out queue_name text, out queue_ntables integer, out queue_cur_table integer,
  out queue_rotation_period interval, out queue_switch_time timestamptz,
  out queue_external_ticker boolean, out queue_ticker_paused boolean,
  out queue_ticker_max_count integer, out queue_ticker_max_lag interval,
  out queue_ticker_idle_period interval, out ticker_lag interval,
  out ev_per_sec float8, out ev_new bigint, out last_tick_id bigint)
returns setof record
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select * from pgque.get_queue_info(null::text);
$$;
