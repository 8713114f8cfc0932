-- maint_retry_events: move every due retry back into its queue (same ev_id, same owner,
-- so only the nacking subscription sees it again), in chunks of 1,000 until none is due.
-- One mover at a time; producers and nacks are not blocked. As for any writer, the
-- current tables are read after the xid is taken, and the queue rows key-share locked.
-- returns: events moved. tables: retry_queue, pgque.event_<id>_<cur>.
create or replace function pgque.maint_retry_events()
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  chunk int;
  moved int := 0;
begin
  lock table pgque.retry_queue in share update exclusive mode;
  perform pg_catalog.pg_current_xact_id();
  for q in
    select * from pgque.queue
     where queue_id in (select ev_queue from pgque.retry_queue where ev_retry_after <= pg_catalog.now())
     order by queue_id
       for key share
  loop
    loop
      execute pg_catalog.format(
        'with due as ('
        '   delete from pgque.retry_queue r'
        '    where (r.ev_owner, r.ev_id) in ('
        '      select ev_owner, ev_id from pgque.retry_queue'
        '       where ev_queue = $1 and ev_retry_after <= pg_catalog.now()'
        '       order by ev_retry_after limit 1000)'
        '   returning r.*)'
        ' insert into %s (ev_id, ev_time, ev_owner, ev_retry, ev_type, ev_data,'
        '                 ev_extra1, ev_extra2, ev_extra3, ev_extra4)'
        ' select ev_id, ev_time, ev_owner, ev_retry, ev_type, ev_data,'
        '        ev_extra1, ev_extra2, ev_extra3, ev_extra4'
        '   from due, lateral (select pg_catalog.nextval(%L)) as activity',
        pgque._event_table(q.queue_id, q.queue_cur_table), pgque._queue_sequence(q.queue_id, 'id'))
        using q.queue_id;
      get diagnostics chunk = row_count;
      moved := moved + chunk;
      exit when chunk < 1000;
    end loop;
  end loop;
  return moved;
end;
$$;
