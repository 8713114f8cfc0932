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
