-- dlq_inspect: the newest dead letters of a queue.
-- params: queue, how many (default 100). returns: pgque.dead_letter rows.
create or replace function pgque.dlq_inspect(i_queue_name text, i_limit_count int default 100)
returns setof pgque.dead_letter
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select d.*
    from pgque.dead_letter d
    join pgque.queue q on q.queue_id = d.dl_queue_id
   where q.queue_name = i_queue_name
   order by d.dl_time desc, d.dl_id desc
   limit i_limit_count;
$$;

-- dlq_replay: publish a dead letter again, as a new event for every consumer of its
-- queue, and delete it. The row is locked, so concurrent replays publish it once.
-- returns: the new event id. errors: dead letter entry not found: <id>.
create or replace function pgque.dlq_replay(i_dead_letter_id bigint)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  dl pgque.dead_letter;
  qname text;
  new_id bigint;
begin
  select * into dl from pgque.dead_letter where dl_id = i_dead_letter_id for update;
  if not found then
    raise exception 'dead letter entry not found: %', i_dead_letter_id using errcode = 'PQ005';
  end if;
  select queue_name into qname from pgque.queue where queue_id = dl.dl_queue_id;
  new_id := pgque.insert_event(qname, dl.ev_type, dl.ev_data, dl.ev_extra1, dl.ev_extra2, dl.ev_extra3, dl.ev_extra4);
  delete from pgque.dead_letter where dl_id = i_dead_letter_id;
  return new_id;
end;
$$;

-- dlq_replay_all: replay every dead letter of a queue, each in its own subtransaction.
-- returns: how many were replayed and failed, and the first failure as 'dl_id=<id>: <error>'.
create or replace function pgque.dlq_replay_all(
  i_queue_name text, out replayed bigint, out failed bigint, out first_error text)
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  id bigint;
begin
  replayed := 0;
  failed := 0;
  for id in
    select d.dl_id from pgque.dead_letter d
      join pgque.queue q on q.queue_id = d.dl_queue_id
     where q.queue_name = i_queue_name
     order by d.dl_id
  loop
    begin
      perform pgque.dlq_replay(id);
      replayed := replayed + 1;
    exception when others then
      failed := failed + 1;
      first_error := coalesce(first_error, 'dl_id=' || id || ': ' || sqlerrm);
      raise warning 'dlq_replay_all: dl_id=% failed: %', id, sqlerrm;
    end;
  end loop;
end;
$$;

-- dlq_purge: delete a queue's dead letters older than i_older_than (default 30 days).
-- returns: rows deleted (0 for an unknown queue).
create or replace function pgque.dlq_purge(i_queue_name text, i_older_than interval default '30 days')
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  purged int;
begin
  delete from pgque.dead_letter d
   using pgque.queue q
   where q.queue_id = d.dl_queue_id and q.queue_name = i_queue_name
     and d.dl_time < pg_catalog.now() - i_older_than;
  get diagnostics purged = row_count;
  return purged;
end;
$$;
