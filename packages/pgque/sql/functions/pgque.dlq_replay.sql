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
    raise exception 'dead letter entry not found: %', i_dead_letter_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ005';
  end if;
  select queue_name into qname from pgque.queue where queue_id = dl.dl_queue_id;
  new_id := pgque.insert_event(qname, dl.ev_type, dl.ev_data, dl.ev_extra1, dl.ev_extra2, dl.ev_extra3, dl.ev_extra4);
  delete from pgque.dead_letter where dl_id = i_dead_letter_id;
  return new_id;
end;
$$;
